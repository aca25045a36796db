# ${why}
# NVIDIA's Dockerfile builds each DALI operator of csrc/ in a builder stage FROM the base
# (cmake .. && make in csrc/<operator>/build) and copies the one library it makes into
# /usr/local/lib, where dali.py loads it (plugin_manager.load_library). Here the same CMake
# build runs in the image, against the base's DALI (found by `python -c "import nvidia.dali"`,
# as NVIDIA's CMakeLists.txt asks) and CUDA, in a folder outside the work directory, and only
# the library is kept: the work directory holds csrc/ as NVIDIA's COPY . . leaves it. The CUDA
# targets are the ones the CMakeLists.txt sets itself (CMAKE_CUDA_ARCHITECTURES "90;100").
set -eu
build_operator() {
    build=$$(mktemp -d)
    cmake -S "csrc/$$1" -B "$$build"
    make -C "$$build" -j"$$(nproc)"
    install -m 0755 "$$build/$$2" "/usr/local/lib/$$2"
    rm -rf "$$build"
}
build_operator ${operators}
