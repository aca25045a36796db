#!/usr/bin/env bash
# Build minigo's C++ engine (selfplay, eval and their MPI variants) as NVIDIA's v0.6
# Dockerfile did, but inside an upstream TensorFlow checkout instead of NGC's source tree.
#
# Runs in the benchmark's workdir (/opt/reinforcement), with the image's environment plus
# BAZEL_VERSION, BAZEL_SHA256, TF_COMMIT and BOARD_SIZE from the recipe (recipes/benchmarks/minigo.yaml).
# GitHub is reached through GIT_MIRROR (mlcc gen --git-mirror) where the build declares it.
# Not test-built by mlcc (it takes hours and a GPU-capable CUDA install): see the recipe note.
set -euo pipefail

if [ "$(uname -m)" != x86_64 ]; then
  echo "minigo's C++ build needs Bazel, which publishes no $(uname -m) installer" >&2
  exit 1
fi

# 1. Bazel, checked against the recipe's pinned sha256 and the checksum file published
#    beside the installer.
installer="bazel-${BAZEL_VERSION}-installer-linux-x86_64.sh"
github="${GIT_MIRROR:-https://github.com}"
release="${github}/bazelbuild/bazel/releases/download/${BAZEL_VERSION}"
cd /tmp
curl -fsSL -o "${installer}" "${release}/${installer}"
curl -fsSL -o "${installer}.sha256" "${release}/${installer}.sha256"
echo "${BAZEL_SHA256}  ${installer}" | sha256sum -c -
sha256sum -c "${installer}.sha256"
bash "${installer}" --prefix=/usr/local
rm -f "${installer}" "${installer}.sha256"

# 2. TensorFlow's source tree at the release the image's pip package was built from.
# (no git -C: RHEL 7's git 1.8.3 lacks it), verified after checkout.
git clone "${github}/tensorflow/tensorflow.git" /opt/tensorflow
cd /opt/tensorflow
git checkout --detach "${TF_COMMIT}"
test "$(git rev-parse HEAD)" = "${TF_COMMIT}"
site_packages=$(python -c 'import tensorflow, os; print(os.path.dirname(os.path.dirname(tensorflow.__file__)))')
export PYTHON_BIN_PATH="$(command -v python)" PYTHON_LIB_PATH="${site_packages}"
export TF_NEED_CUDA=1 TF_CUDA_VERSION="${CUDA_VERSION%.*}" TF_CUDNN_VERSION="${CUDNN_VERSION%%.*}"
export CUDA_TOOLKIT_PATH=/usr/local/cuda CUDNN_INSTALL_PATH="${CUDNN_LIB_DIR%/*}"
export TF_NCCL_VERSION="${NCCL_VERSION%%.*}" NCCL_INSTALL_PATH="${NCCL_HOME}"
export TF_CUDA_COMPUTE_CAPABILITIES="${TF_CUDA_COMPUTE_CAPABILITIES}" GCC_HOST_COMPILER_PATH="$(command -v gcc)"
export TF_NEED_TENSORRT=0 TF_NEED_ROCM=0 TF_NEED_MPI=0 TF_NEED_OPENCL_SYCL=0 TF_CUDA_CLANG=0
export TF_DOWNLOAD_CLANG=0 TF_SET_ANDROID_WORKSPACE=0 TF_ENABLE_XLA=0 CC_OPT_FLAGS=-O2
./configure < /dev/null
bazel build -c opt --config=cuda --cxxopt=-D_GLIBCXX_USE_CXX11_ABI=0 \
  //tensorflow:libtensorflow_cc.so //tensorflow:libtensorflow_framework.so

# 3. The layout minigo's cc/BUILD expects: TensorFlow libraries and headers, and MPI.
minigo=/opt/reinforcement/minigo
cp -r "${minigo}/cc" /opt/tensorflow/
mkdir -p cc/tensorflow cc/mpi/lib cc/mpi/include
cp bazel-bin/tensorflow/libtensorflow_cc.so bazel-bin/tensorflow/libtensorflow_framework.so cc/tensorflow/
cp -r "${site_packages}/tensorflow/include/." cc/tensorflow/
mpi_lib=$(dirname "$(find / -xdev -name 'libmpi.so' -path '*openmpi*' 2>/dev/null | head -n 1)")
mpi_include=$(dirname "$(find / -xdev -name mpi.h -path '*openmpi*' 2>/dev/null | head -n 1)")
cp "${mpi_lib}/libmpi.so" cc/mpi/lib/
cp "${mpi_include}/mpi.h" "${mpi_include}/mpi_portable_platform.h" cc/mpi/include/
ln -fs /usr/local/cuda/lib64/stubs/libcuda.so /usr/local/cuda/lib64/stubs/libcuda.so.1

# 4. minigo's engine, without TensorRT (NGC built with --define=trt=1).
bazel build -c opt --cxxopt=-D_GLIBCXX_USE_CXX11_ABI=0 --define=gpu=1 --define=trt=0 --define=tf=1 \
  --define=board_size="${BOARD_SIZE}" cc:selfplay cc:eval cc:selfplay_mpi cc:eval_mpi
mkdir -p "${minigo}/bazel-bin/cc"
cp -L bazel-bin/cc/selfplay bazel-bin/cc/eval bazel-bin/cc/selfplay_mpi bazel-bin/cc/eval_mpi "${minigo}/bazel-bin/cc/"
bazel shutdown
rm -rf /root/.cache/bazel
