# The compiled modules bert imports from apex (training_results_v2.1 @158189d,
# bert/implementations/pytorch-22.09): apex_C and amp_C (run_pretraining.py, optimization.py),
# mlp_cuda (model/layers/fused.py), fused_dense_cuda (apex.fused_dense in modeling.py, fmha.py),
# fmhalib (fmha.py), fast_multihead_attn (apex.contrib.multihead_attn in modeling.py, mha.py),
# fast_layer_norm (apex.contrib.layer_norm in model/layers/layernorm.py), fused_layer_norm_cuda
# (apex.normalization, which SelfMultiheadAttn imports), and fused_adam_cuda with
# distributed_lamb_cuda (optim/distributed_fused_lamb.py, chosen by run_and_time.sh's
# --distributed_lamb). Each needs its own setup.py option; one left out fails the build here
# rather than the first run. find_spec locates each module without loading it (loading a CUDA
# extension may want the driver, which a build host need not have).
set -eu
python - <<'PY'
import importlib.util
import sys

wanted = (
    "apex_C",
    "amp_C",
    "mlp_cuda",
    "fused_dense_cuda",
    "fused_layer_norm_cuda",
    "fmhalib",
    "fast_multihead_attn",
    "fast_layer_norm",
    "fused_adam_cuda",
    "distributed_lamb_cuda",
)
missing = [name for name in wanted if importlib.util.find_spec(name) is None]
if missing:
    sys.exit("apex-extensions.sh: apex was built without " + ", ".join(missing))
PY
