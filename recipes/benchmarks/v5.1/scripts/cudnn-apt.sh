# ${why}
# NVIDIA's Dockerfile replaces the base's cuDNN with NVIDIA's CUDA repository package at an
# exact version (the repository for this machine: x86_64 or sbsa).
set -eu
nvarch=$$(uname -m | grep x86_64 || echo sbsa)
curl -fsSL "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2404/$$nvarch/3bf863cc.pub" \
  > /etc/apt/trusted.gpg.d/cuda.asc
echo "deb https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2404/$$nvarch /" \
  > /etc/apt/sources.list.d/cuda.list
apt-get update
apt-get install -y ${packages}
rm -rf /var/lib/apt/lists/*
