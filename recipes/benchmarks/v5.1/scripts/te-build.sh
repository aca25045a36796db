# ${why}
# TransformerEngine from source at the pinned commit, its three submodules at the commits
# NVIDIA's Dockerfile checks out, compiled for NVTE_CUDA_ARCHS (the image's environment: the
# recipe's list, narrowed to the GPU asked by mlcc gen --gpu).
set -eu
commit=${commit}
git clone --no-checkout https://github.com/NVIDIA/TransformerEngine.git /workspace/transformerengine
cd /workspace/transformerengine
git checkout --quiet "$$commit"
test "$$(git rev-parse HEAD)" = "$$commit"
git submodule update --init --recursive
git -C 3rdparty/cudnn-frontend checkout --quiet ${cudnn_frontend}
git -C 3rdparty/googletest checkout --quiet ${googletest}
git -C 3rdparty/cutlass checkout --quiet ${cutlass}
python -m pip uninstall -y transformer-engine transformer_engine || true
: "$${NVTE_CUDA_ARCHS:?the recipe sets NVTE_CUDA_ARCHS in the image environment}"
${options} python -m pip install --no-cache-dir --no-build-isolation .
echo "$$commit" > /TE_COMMIT_HASH.env
