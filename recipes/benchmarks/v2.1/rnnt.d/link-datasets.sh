# NVIDIA's run.sub mounts three host folders into the container: LibriSpeech at /datasets, the
# tokenized manifests run_and_time.sh reads at /metadata (TRAIN_MANIFESTS, VAL_MANIFESTS) and the
# sentencepiece model configs/baseline_v3-1023sp.yaml names at /sentencepieces. mlcc's run
# mounts one dataset volume at /datasets; link the other two paths into it here, at build time,
# since OpenShift's arbitrary non-root UID cannot create them in / at run time.
set -eu
ln -sfn /datasets/metadata /metadata
ln -sfn /datasets/sentencepieces /sentencepieces
