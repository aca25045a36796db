# NeMo 25.04-alpha.rc1 (NVIDIA's NEMO_REVISION), editable with its nlp extra
# NVIDIA's Dockerfile clones the repository at a tag or branch name and pip-installs the
# checkout; here the clone is checked out at the full commit the recipe pins for that name, with
# the submodules that commit names (rapidyaml's c4core; NeMo and Megatron-LM have none).
set -eu
url=https://github.com/NVIDIA/NeMo.git
commit=3310699cbc5d2cfef35871107e36c0d53892c194
dest=/workspace/ft-llm/NeMo
git clone --no-checkout "$url" "$dest"
git -C "$dest" checkout --quiet "$commit"
test "$(git -C "$dest" rev-parse HEAD)" = "$commit"
git -C "$dest" submodule update --init --recursive
cd "$dest"
# what NVIDIA's Dockerfile changes in the checkout before it installs it (":" for nothing)
:
pip_args=(-e '.[nlp]')
python -m pip install --no-cache-dir "${pip_args[@]}"
after=(none)
if [ "${after[0]}" != "none" ]; then "${after[@]}"; fi
