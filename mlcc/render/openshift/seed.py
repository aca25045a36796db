"""One seed per run, the same for every rank (recipes: ``build.run_seed``).

NVIDIA's v5.x run.sub draws the seed once per experiment (``SEED_BASE=${SEED-$RANDOM}``, then
``export SEED``; dlrm_dcnv2's ``export SEED=$RANDOM``) before srun starts the tasks, so every
task reads the same value, and the user's SEED, where given, is every task's. Their
run_and_time.sh needs it: the NeMo LLMs stop at ``: "${SEED:?SEED not set}"``, flux1 exits
("SEED is not set!"), llama2_70b_lora and dlrm_dcnv2 fall back to one fixed seed (1, 0) for
every run, and rgat draws ``${SEED:-$RANDOM}`` in each task: ranks with different seeds.

The draw happens when the run starts, never when mlcc writes the files (the same stack gives
byte-identical files; a seed written into them would be every submission's). Each run object
starts its command under :mod:`.seed_script` (``python -c <script> SEED COMMAND...``), which
takes the environment's SEED (checked: a whole number below 2**32) or draws one in bash's
$RANDOM range, as NVIDIA's do, and execs the command with it:

- Pod and Job: one draw, which torch.distributed.run hands to all its local processes (it
  passes its environment on; it sets no SEED of its own).
- MPIJob: the launcher draws it and mpirun's ``-x SEED`` gives it to every rank (ranks start
  from the workers' sshd, not from the pods, so only what -x carries reaches them).
- PyTorchJob: each pod starts on its own, without a launcher. The Master (PET_NODE_RANK 0)
  draws and serves the value from a ``torch.distributed.TCPStore`` on a second port of its
  address (PET_MASTER_PORT + 1); each Worker reads it there, and the Master waits until every
  Worker has taken it before starting torchrun. torch is in every image a PyTorchJob runs,
  and its TCPStore client retries until the Master's address resolves and listens, as
  torchrun's own rendezvous does. The operator's Master service is headless (``clusterIP:
  None``, github:kubeflow/training-operator v1.9.0 pkg/controller.v1/common/service.go), so
  MASTER_ADDR names the Master pod's own address and any port of it is reachable, not only
  the one the service lists. Both sides stop at a deadline (MLCC_SEED_TIMEOUT, 600 s: the
  rendezvous timeout torchrun would meet next) with a message naming the address.
  Weighed and passed over: a value every pod could derive alone (the operator's pod labels
  carry the job's name, not its UID, and the downward API cannot read owner references), a
  file on a shared volume (results may be an emptyDir), a ConfigMap the Master writes (it
  needs API access from the pod), and torchrun's own agent store (it exists only once
  torchrun runs, so reading it would mean changing NVIDIA's per-rank wrapper in the image).
"""

from __future__ import annotations

from functools import cache
from typing import List, Optional, Sequence

from mlcc.kb.model import BenchmarkBuild

# The image's interpreter: the run objects start torch.distributed.run with it too
PYTHON = "python"


@cache
def script() -> str:
    """The text of :mod:`.seed_script`, run with ``python -c`` in the pods."""
    from importlib import resources  # only a benchmark with a run seed reads it

    return resources.files(__package__).joinpath("seed_script.py").read_text(encoding="utf-8")


def seeded(build: BenchmarkBuild, command: Sequence[str]) -> List[str]:
    """``command`` started under the seed script where the recipe asks for a run seed."""
    if build.run_seed is None:
        return list(command)
    return [PYTHON, "-c", script(), build.run_seed.env, *command]


def seed_env(build: BenchmarkBuild) -> Optional[str]:
    """The variable mpirun must pass on to every rank (``-x``), if the recipe has a run seed."""
    return None if build.run_seed is None else build.run_seed.env
