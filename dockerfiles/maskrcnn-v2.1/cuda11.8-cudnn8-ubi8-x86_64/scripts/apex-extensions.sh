# apex's setup.py skips --fast_bottleneck and --fused_conv_bias_relu with only a warning when it
# finds no cuDNN >= 8.4 (check_cudnn_version_and_warn), while maskrcnn imports them, and the
# peer_memory/nccl_p2p ones, unconditionally (generalized_rcnn.py, utils/fuse_conv.py): fail the
# build here rather than the first run. find_spec locates each module without loading it (loading
# a CUDA extension may want the driver, which a build host need not have).
set -eu
python - <<'PY'
import importlib.util
import sys

wanted = ("apex_C", "amp_C", "fast_bottleneck", "peer_memory_cuda", "nccl_p2p_cuda", "fused_conv_bias_relu")
missing = [name for name in wanted if importlib.util.find_spec(name) is None]
if missing:
    sys.exit("apex-extensions.sh: apex was built without " + ", ".join(missing))
PY
