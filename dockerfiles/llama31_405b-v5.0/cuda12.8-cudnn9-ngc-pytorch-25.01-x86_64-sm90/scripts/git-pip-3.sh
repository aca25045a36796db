# Megatron-LM core_r0.11.0 (NVIDIA's MCORE_REVISION), then its dataset helpers
# NVIDIA's Dockerfile clones the repository at a tag or branch name and pip-installs the
# checkout; here the clone is checked out at the full commit the recipe pins for that name, with
# the submodules that commit names (rapidyaml's c4core; NeMo and Megatron-LM have none).
set -eu
url=https://github.com/NVIDIA/Megatron-LM.git
commit=7c00175e6b24b3cd835d21a9d287c35a07e275b3
dest=/workspace/Megatron-LM
git clone --no-checkout "$url" "$dest"
git -C "$dest" checkout --quiet "$commit"
test "$(git -C "$dest" rev-parse HEAD)" = "$commit"
git -C "$dest" submodule update --init --recursive
cd "$dest"
# what NVIDIA's Dockerfile changes in the checkout before it installs it (":" for nothing)
:
pip_args=(.)
python -m pip install --no-cache-dir "${pip_args[@]}"
after=(make -C megatron/core/datasets)
if [ "${after[0]}" != "none" ]; then "${after[@]}"; fi
