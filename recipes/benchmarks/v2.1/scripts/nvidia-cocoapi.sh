# NVIDIA's cocoapi 2.0+nv0.7.0, copied into ./cocoapi from HPE's v2.1 submission (the clone of
# NVIDIA/cocoapi v0.7.0 that NVIDIA's Dockerfile makes, as HPE's image held it). Its setup.py
# compiles the `ext` module against NGC's conda numpy
# (/opt/conda/lib/python3.8/site-packages/numpy/core: include/ for numpy/arrayobject.h, lib/ for
# libnpymath), which this image does not have: point both at the numpy installed here. The
# objects, .so files and egg-info HPE's copy carries were built in NGC's container: remove them,
# so that everything is compiled here, _mask.pyx by Cython included.
set -eu
setup=cocoapi/PythonAPI/setup.py
core=$(python -c 'import os, numpy; print(os.path.dirname(numpy.get_include()))')
sed -i "s|/opt/conda/lib/python3.8/site-packages/numpy/core|${core}|g" "$setup"
grep -q -- "-I${core}/include" "$setup"
if grep -q /opt/conda "$setup"; then
    echo "nvidia-cocoapi.sh: $setup still names /opt/conda" >&2
    exit 1
fi
rm -rf cocoapi/PythonAPI/build cocoapi/PythonAPI/pycocotools.egg-info
rm -f cocoapi/PythonAPI/*.so cocoapi/PythonAPI/pycocotools/*.so cocoapi/PythonAPI/pycocotools/_mask.c
