# CUDA-aware hwloc 2.4.1 as NVIDIA's Dockerfile builds it, over the HPC-X Open MPI's hwloc headers it removes
# NVIDIA's Dockerfile ("CUDA-Aware hwloc"): remove the hwloc headers HPC-X's Open MPI carries,
# so that an #include <hwloc.h> finds the one built here, then build hwloc from its release
# tarball with CUDA support into /usr/local (configure's default prefix), with NVIDIA's
# configure flags. The tarball is what NVIDIA's wget fetches, checked here against its sha256
# (NVIDIA's wget skips the certificate check and checks nothing); it carries the configure
# script made at release, which a checkout of the tag would have to make with autogen.sh and
# the autotools the base does not hold.
set -eu
version=2.4.1
sha256=4267fe1193a8989f3ab7563a7499e047e77e33fed8f4dec16822a7aebcf78459
cd /opt/hpcx/ompi/include/openmpi/opal/mca/hwloc/hwloc201
rm -rfv hwloc201.h hwloc/include/hwloc.h
tarball=/var/tmp/hwloc-$version.tar.gz
mkdir -p /var/tmp
wget -q -O "$tarball" "https://download.open-mpi.org/release/hwloc/v${version%.*}/hwloc-$version.tar.gz"
echo "$sha256  $tarball" | sha256sum -c -
tar -x -f "$tarball" -C /var/tmp
cd "/var/tmp/hwloc-$version"
./configure CPPFLAGS="-I/usr/local/cuda/include/ -L/usr/local/cuda/lib64/" LDFLAGS="-L/usr/local/cuda/lib64" --enable-cuda
make -j"$(nproc)"
make install
cd /
rm -rf "/var/tmp/hwloc-$version" "$tarball"
