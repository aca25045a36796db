# ${why}
# NVIDIA's Dockerfile removes the base's libnccl2 package and installs NCCL built from source
# at a release tag; here at the full commit of that tag.
set -eu
commit=${commit}
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get remove -y libnccl2
rm -rf /var/lib/apt/lists/*
git clone --no-checkout https://github.com/NVIDIA/nccl.git /workspace/nccl
cd /workspace/nccl
git checkout --quiet "$$commit"
test "$$(git rev-parse HEAD)" = "$$commit"
make -j"$$(nproc)" install
