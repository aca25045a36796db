export BUCKET=1
export EPOCH=${EPOCH:-80}
export LR=0.007
export BETA1=0.9
export BETA2=0.999
export WEIGHTS_INIT_SCALE=0.5
export EMA=0.995
export LR_DECAY_POWER=0.939
export WARMUP=6
export HOLD_EPOCHS=33

