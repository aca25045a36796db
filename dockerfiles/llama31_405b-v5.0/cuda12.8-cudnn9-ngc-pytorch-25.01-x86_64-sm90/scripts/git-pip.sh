# NeMo v2.2.0 (NVIDIA's NEMO_REVISION), editable with its llm and nlp extras
# NVIDIA's Dockerfile clones the repository at a tag or branch name and pip-installs the
# checkout; here the clone is checked out at the full commit the recipe pins for that name, with
# the submodules that commit names (rapidyaml's c4core; NeMo and Megatron-LM have none).
set -eu
url=https://github.com/NVIDIA/NeMo.git
commit=7192a2c944c48ab253f3f711ee52fe2dc986a3bb
dest=/workspace/NeMo
git clone --no-checkout "$url" "$dest"
git -C "$dest" checkout --quiet "$commit"
test "$(git -C "$dest" rev-parse HEAD)" = "$commit"
git -C "$dest" submodule update --init --recursive
cd "$dest"
# what NVIDIA's Dockerfile changes in the checkout before it installs it (":" for nothing)
sed -i "/mamba-ssm/d" requirements/requirements_nlp.txt
sed -i "/triton>=3.1.0/d" requirements/requirements.txt
sed -i 's/tensorstore<0.1.46/tensorstore/g' requirements/requirements_nlp.txt
sed -i '/nvidia-resiliency-ext/d' requirements/requirements_nlp.txt
sed -i 's/protobuf==3.20.3/protobuf/g' requirements/requirements.txt
pip_args=(-e '.[llm,nlp]')
python -m pip install --no-cache-dir "${pip_args[@]}"
after=(none)
if [ "${after[0]}" != "none" ]; then "${after[@]}"; fi
