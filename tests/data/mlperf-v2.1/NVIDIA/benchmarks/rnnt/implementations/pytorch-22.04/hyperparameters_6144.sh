export BUCKET=1
export EPOCH=120
export LR=0.014
export EMA=0.96
export WARMUP=16
export HOLD_EPOCHS=40
export LR_DECAY_POWER=0.970
export WEIGHTS_INIT_SCALE=0.5
export BETA1=0.82
export BETA2=0.98

