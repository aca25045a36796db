# HugeCTR v25.03.00 (NVIDIA's clone -b v25.03.00) from source for the SM list of the image environment
# HugeCTR from source as NVIDIA's Dockerfile builds it (cmake -DSM=$SM -DUSE_CUDART_STATIC=ON
# -DENABLE_MULTINODES=ON -DSHARP_A2A=OFF, make install into /usr/local/hugectr), at the full
# commit of NVIDIA's tag, for the SM list in the image's environment (the recipe's, narrowed to
# the GPU asked by mlcc gen --gpu).
set -eu
commit=d4fecdb3f7c0df850c4bff76ca7fdcdb1c5bafce
: "${SM:?the recipe sets SM in the image environment}"
# NVIDIA's "temporal workaround to make HugeCTR compile" on the NGC base: pip3 uninstall -y tbb,
# the base's PyPI tbb (its libraries and headers under /usr/local) beside libtbb-dev. It is the
# base's interpreter's package (recipes/bases-ngc.yaml: /usr/bin/python3.12), which the image's
# virtual environment only sees, so that interpreter's pip removes it.
/usr/bin/python3.12 -m pip uninstall -y tbb
git clone --no-checkout https://github.com/NVIDIA-Merlin/HugeCTR.git /workspace/dlrm/hugectr
cd /workspace/dlrm/hugectr
git checkout --quiet "$commit"
test "$(git rev-parse HEAD)" = "$commit"
git submodule update --init --recursive
arch=$(uname -m)
ln -sf /usr/lib/$arch-linux-gnu/libibverbs.so.1.*.0 /usr/lib/$arch-linux-gnu/libibverbs.so
mkdir build
cd build
cmake -DCMAKE_BUILD_TYPE=Release "-DSM=$SM" -DUSE_CUDART_STATIC=ON -DENABLE_MULTINODES=ON -DSHARP_A2A=OFF ..
make -j"$(nproc)"
make install
chmod +x /usr/local/hugectr/bin/* /usr/local/hugectr/lib/*
cd /
rm -rf /workspace/dlrm/hugectr /usr/lib/$arch-linux-gnu/libibverbs.so
