# NeMo-Run main (NVIDIA's NEMORUN_REVISION) before NVIDIA's first H100 run (an inference), editable
# NVIDIA's Dockerfile clones the repository at a tag or branch name and pip-installs the
# checkout; here the clone is checked out at the full commit the recipe pins for that name, with
# the submodules that commit names (rapidyaml's c4core; NeMo and Megatron-LM have none).
set -eu
url=https://github.com/NVIDIA/NeMo-Run.git
commit=bf487332d0ccb45cc3b6b214db7f8f61b6f6e6d8
dest=/workspace/NeMo-Run
git clone --no-checkout "$url" "$dest"
git -C "$dest" checkout --quiet "$commit"
test "$(git -C "$dest" rev-parse HEAD)" = "$commit"
git -C "$dest" submodule update --init --recursive
cd "$dest"
# what NVIDIA's Dockerfile changes in the checkout before it installs it (":" for nothing)
:
pip_args=(-e .)
python -m pip install --no-cache-dir "${pip_args[@]}"
after=(none)
if [ "${after[0]}" != "none" ]; then "${after[@]}"; fi
