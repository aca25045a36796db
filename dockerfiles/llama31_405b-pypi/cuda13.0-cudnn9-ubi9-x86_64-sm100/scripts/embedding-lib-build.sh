# NVIDIA's embedding_lib (custom_embedding, a CUDA extension of torch.utils.cpp_extension), as
# NVIDIA's Dockerfile installs it: pip install --force-reinstall --no-deps . in embedding_lib.
# Without build isolation: its setup.py imports torch, and it has no pyproject.toml, so pip
# (which builds such a project in an isolated environment of setuptools alone) would not find
# the image's torch. Its nvcc flags name the GPU code themselves (sm_90 and sm_100), so no arch
# list of the image applies (torch's cpp_extension drops TORCH_CUDA_ARCH_LIST when they do).
set -eu
cd embedding_lib
python -m pip install --no-cache-dir --no-deps --no-build-isolation --force-reinstall .
