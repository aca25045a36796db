# apex's setup.py skips --fused_conv_bias_relu with only a warning when it finds no cuDNN >= 8.4
# (check_cudnn_version_and_warn), and ssd's model/focal_loss.py and model/retinanet.py import
# apex.contrib's focal loss and conv-bias-ReLU inside try/except, printing "it's fine if you do not
# use --apex-..." while every one of NVIDIA's configurations passes --apex-focal-loss and
# --apex-head-fusion: fail the build here rather than the first run. train.py imports apex_C, and
# --apex-adam's FusedAdam needs amp_C. find_spec locates each module without loading it (loading a
# CUDA extension may want the driver, which a build host need not have).
set -eu
python - <<'PY'
import importlib.util
import sys

wanted = ("apex_C", "amp_C", "focal_loss_cuda", "fused_conv_bias_relu")
missing = [name for name in wanted if importlib.util.find_spec(name) is None]
if missing:
    sys.exit("apex-extensions.sh: apex was built without " + ", ".join(missing))
PY
