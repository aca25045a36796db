# Build step of the e2e launch probe: writes the stand-ins into the work directory.
set -eu
cat > config_DGX1.sh <<'END'
# what NVIDIA's config_DGX1.sh says about the system (sourced when no other config matches)
BATCHSIZE=208
LR=5
DGXNNODES=1
DGXNGPU=8
DGXNSOCKET=2
DGXSOCKETCORES=20
END
cat > run_and_time.sh <<'END'
#!/bin/bash
DGXSYSTEM=${DGXSYSTEM:-"DGX1"}
if [[ -f config_${DGXSYSTEM}.sh ]]; then
  source config_${DGXSYSTEM}.sh
else
  source config_DGX1.sh
fi
SLURM_NTASKS_PER_NODE=${SLURM_NTASKS_PER_NODE:-$DGXNGPU}
MULTI_NODE=${MULTI_NODE:-''}
set -e
export DGXSYSTEM DGXNGPU DGXNNODES DGXNSOCKET DGXSOCKETCORES BATCHSIZE LR
exec ./bind_launch.sh --nsockets_per_node ${DGXNSOCKET} --ncores_per_socket ${DGXSOCKETCORES} \
  --nproc_per_node $SLURM_NTASKS_PER_NODE $MULTI_NODE ./train.sh
END
cat > bind_launch.sh <<'END'
#!/bin/bash
# bind_launch's contract: one process per local rank, RANK/WORLD_SIZE/MASTER_* in the environment
nnodes=1 node_rank=0 nproc=1 master_addr=127.0.0.1 master_port=29500
while [[ $# -gt 1 ]]; do
  case "$1" in
    --nnodes=*) nnodes=${1#*=} ;;
    --node_rank=*) node_rank=${1#*=} ;;
    --master_addr=*) master_addr=${1#*=} ;;
    --master_port=*) master_port=${1#*=} ;;
    --nproc_per_node) nproc=$2; shift ;;
    --nsockets_per_node|--ncores_per_socket) shift ;;
    *) break ;;
  esac
  shift
done
export WORLD_SIZE=$((nproc * nnodes)) MASTER_ADDR=$master_addr MASTER_PORT=$master_port
pids=()
for ((local = 0; local < nproc; local++)); do
  RANK=$((nproc * node_rank + local)) "$1" --local_rank=$local &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
END
cat > train.sh <<'END'
#!/bin/bash
# the training entry point's stand-in: reports its rank and environment
set -eu
{
  echo "rank=$RANK"
  echo "local=${1#--local_rank=}"
  echo "world=$WORLD_SIZE"
  echo "master=$MASTER_ADDR:$MASTER_PORT"
  echo "uid=$(id -u)"
  for name in DGXSYSTEM DGXNGPU DGXNNODES DGXNSOCKET DGXSOCKETCORES BATCHSIZE LR NCCL_IB_DISABLE; do
    echo "$name=${!name:-}"
  done
} > "/results/rank-$RANK.txt"
END
chmod 0755 run_and_time.sh bind_launch.sh train.sh
