# NVIDIA's Dockerfile (training_results_v2.1 @158189d, bert/implementations/pytorch-22.09):
# `cd /workspace/bert/mhalib && python setup.py build && cp build/lib*/mhalib* ../`. The module
# lands in the work directory, which is on PYTHONPATH (bmm1.py, bmm2.py, softmax.py, modeling.py
# and run_pretraining.py import mhalib). setup.py passes its own -gencode flags (sm_70, sm_80 and
# compute_80 PTX), so torch ignores TORCH_CUDA_ARCH_LIST for it: on H100 the driver JIT-compiles
# the compute_80 PTX. Exactly one module must be copied; the build tree is removed so that only
# the module is left of it.
set -eu
(cd mhalib && python setup.py build)
set -- mhalib/build/lib*/mhalib*.so
if [ "$#" -ne 1 ] || [ ! -f "$1" ]; then
    echo "mhalib.sh: expected one mhalib*.so under mhalib/build/lib*, found: $*" >&2
    exit 1
fi
cp "$1" .
rm -rf mhalib/build
