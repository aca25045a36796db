#!/bin/sh
# The framework the image installed from the index answers as the stack says it should.
set -eu
python - <<'PY'
import torch, torchvision, e2e_wheels_step
assert torch.__version__ == "2.11.0+cu130", torch.__version__
assert torch.version.cuda == "13.0", torch.version.cuda
print("e2e-wheels: torch", torch.__version__, "cuDNN", torch.backends.cudnn.version(), "NCCL", torch.cuda.nccl.version())
PY
