# NVIDIA's v5.x run_and_time.sh reads its configuration from the environment: under Slurm the
# submitting shell sources config_<system>.sh and every task inherits its exports. mlcc's run
# manifests mount config_${DGXSYSTEM}.sh in the work directory instead; this wrapper, written
# into the work directory, sources it (exporting every value, as NVIDIA's files export theirs)
# and then runs NVIDIA's run_and_time.sh. A process started per GPU (torch.distributed.run on one
# node, mpirun's ranks on several: LOCAL_RANK, RANK, LOCAL_WORLD_SIZE set) is also given the
# task variables Slurm gives each of NVIDIA's tasks, which the scripts read to take their
# per-task path (rgat and flux1 start torchrun themselves without them). A process started per
# node (mpirun's one rank a node) is given its node's.
# SEED is not drawn here: NVIDIA's run.sub draws one per experiment for every task alike, and a
# value drawn per process would differ between ranks; the run's environment gives it.
set -eu
cat > run_with_config.sh <<'SH'
#!/bin/bash
here=$(dirname "$0")
config="$here/config_${DGXSYSTEM:-MLCC}.sh"
if [ -f "$config" ]; then
  set -a
  # shellcheck disable=SC1090
  source "$config"
  set +a
fi
if [ -n "${LOCAL_RANK:-}" ] && [ -n "${RANK:-}" ] && [ -n "${LOCAL_WORLD_SIZE:-}" ]; then
  export SLURM_LOCALID="${SLURM_LOCALID:-$LOCAL_RANK}"
  export SLURM_PROCID="${SLURM_PROCID:-$RANK}"
  export SLURM_NODEID="${SLURM_NODEID:-$((RANK / LOCAL_WORLD_SIZE))}"
  export SLURM_NTASKS="${SLURM_NTASKS:-${WORLD_SIZE:-}}"
elif [ -n "${OMPI_COMM_WORLD_RANK:-}" ] && [ -n "${OMPI_COMM_WORLD_SIZE:-}" ]; then
  # one task per node (the recipe's ranks: node, as NVIDIA's srun --ntasks-per-node=1):
  # Open MPI's rank is the node's
  export SLURM_LOCALID="${SLURM_LOCALID:-0}"
  export SLURM_PROCID="${SLURM_PROCID:-$OMPI_COMM_WORLD_RANK}"
  export SLURM_NODEID="${SLURM_NODEID:-$OMPI_COMM_WORLD_RANK}"
  export SLURM_NTASKS="${SLURM_NTASKS:-$OMPI_COMM_WORLD_SIZE}"
fi
exec "$here/run_and_time.sh" "$@"
SH
chmod 0755 run_with_config.sh
