# NVIDIA's run_and_time.sh (training_results_v2.1 @158189d, bert/implementations/pytorch-22.09)
# reads the folders run_with_docker.sh mounts (mounts.txt): --input_dir=/workspace/data_phase2,
# --init_checkpoint=/workspace/phase1/model.ckpt-28252.pt, --bert_config_path=/workspace/phase1/
# bert_config.json and --eval_dir=/workspace/evaldata. mlcc mounts one dataset volume at /data,
# laid out as input_preprocessing/prepare_data.sh writes it with its default 4320 shards
# (phase1/, hdf5/eval_varlength/, hdf5/training-4320/hdf5_4320_shards_varlength/; the README's
# tree spells the last one training_4320, the script training-${SHARDS}): link each mount point
# to its folder there, at build time, since an arbitrary non-root UID cannot write under /.
set -eu
ln -sfn /data/hdf5/training-4320/hdf5_4320_shards_varlength /workspace/data_phase2
ln -sfn /data/phase1 /workspace/phase1
ln -sfn /data/hdf5/eval_varlength /workspace/evaldata
