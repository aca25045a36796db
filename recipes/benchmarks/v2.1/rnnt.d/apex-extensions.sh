# apex's setup.py builds each extension only when its option is given, and rnnt imports them at
# module level (train.py: FusedLAMB through amp_C, DistributedFusedLAMB; rnnt/model.py: MLP, FusedDense,
# TransducerJoint; rnnt/loss.py: TransducerLoss; rnnt/decoder.py: amp_C): fail the build here
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
    "distributed_lamb_cuda",
    "fused_adam_cuda",
    "transducer_joint_cuda",
    "transducer_loss_cuda",
)
missing = [name for name in wanted if importlib.util.find_spec(name) is None]
if missing:
    sys.exit("apex-extensions.sh: apex was built without " + ", ".join(missing))
PY
