# ${why}
# NVIDIA's Dockerfile clones the repository at a tag or branch name and pip-installs the
# checkout; here the clone is checked out at the full commit the recipe pins for that name, with
# the submodules that commit names (rapidyaml's c4core; NeMo and Megatron-LM have none).
set -eu
url=${url}
commit=${commit}
dest=${dest}
git clone --no-checkout "$$url" "$$dest"
git -C "$$dest" checkout --quiet "$$commit"
test "$$(git -C "$$dest" rev-parse HEAD)" = "$$commit"
git -C "$$dest" submodule update --init --recursive
cd "$$dest"
# what NVIDIA's Dockerfile changes in the checkout before it installs it (":" for nothing)
${before}
pip_args=(${pip_args})
python -m pip install --no-cache-dir "$${pip_args[@]}"
after=(${after})
if [ "$${after[0]}" != "none" ]; then "$${after[@]}"; fi
