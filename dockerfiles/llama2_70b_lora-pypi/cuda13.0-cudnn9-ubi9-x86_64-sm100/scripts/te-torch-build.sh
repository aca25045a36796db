# TransformerEngine 2.9.0's PyTorch extension (transformer_engine_torch), which PyPI serves as a
# source distribution only, compiled here against the image's torch: without build isolation
# (its build requires torch>=2.1, and an isolated build would compile against the newest torch
# of the index, not the image's) and without its dependencies (the steps before install them:
# its PKG-INFO, written on a CUDA 12 machine, names transformer_engine_cu12, while its setup.py
# requires the core of torch's CUDA major, here transformer_engine_cu13). The sdist's sha256 is
# PyPI's (https://pypi.org/simple/transformer-engine-torch/, read 2026-12-07).
# NVTE_PYTORCH_FORCE_BUILD=TRUE: its setup.py otherwise first downloads a prebuilt wheel from
# GitHub, named for CUDA 12 whatever torch's CUDA is. Its C++ sources include cudnn.h, which
# the CUDA toolkit lacks: the headers come from torch's nvidia-cudnn-cu13 wheel.
set -eu
site=$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
header=$(find "$site/nvidia" -path '*/include/cudnn.h' | sort | head -n 1)
test -n "$header" || { echo "no cudnn.h under $site/nvidia (torch's nvidia-cudnn-cu13 wheel)" >&2; exit 1; }
printf '%s\n' \
  'transformer-engine-torch==2.9.0 --hash=sha256:abbc59f6acf635abf865085ecdf90e7d4ca9a3782bc91a9845e38adb2655a547' \
  > /tmp/te-torch.txt
CPATH="$(dirname "$header")${CPATH:+:$CPATH}" NVTE_PYTORCH_FORCE_BUILD=TRUE NVTE_FRAMEWORK=pytorch \
  python -m pip install --no-cache-dir --no-build-isolation --no-deps --no-binary transformer-engine-torch \
  --require-hashes -r /tmp/te-torch.txt
rm -f /tmp/te-torch.txt
