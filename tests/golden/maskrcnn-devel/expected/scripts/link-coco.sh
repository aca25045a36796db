# NVIDIA's run_and_time.sh (training_results_v0.6 @f312518, maskrcnn/implementations/pytorch)
# links /coco -> ${DATASET_DIR}/coco2017 at run time under `set -e`; that needs a writable /,
# which OpenShift's arbitrary non-root UID does not have. Make the link here, at build time,
# and have the script test for the link itself (-L) instead of a regular file (-f, never true
# for a link), so it never tries to relink at run time.
set -eu
ln -sfn /data/coco2017 /coco
sed -i 's|\[ ! -f /coco \]|[ ! -L /coco ]|' run_and_time.sh
grep -q '\[ ! -L /coco \]' run_and_time.sh
