# NVIDIA's run_and_time.sh (training_results_v2.1 @158189d, maskrcnn/implementations/pytorch-22.09)
# runs `ln -sTf "${DATASET_DIR}/coco2017" /coco` under `set -e`; replacing /coco needs a writable /,
# which OpenShift's arbitrary non-root UID does not have. Make the link here, at build time, and
# have the script relink only where no link exists.
set -eu
ln -sfn /data/coco2017 /coco
sed -i 's|^ln -sTf "${DATASET_DIR}/coco2017" /coco$|[ -L /coco ] \|\| ln -sTf "${DATASET_DIR}/coco2017" /coco|' run_and_time.sh
grep -q '^\[ -L /coco \] || ln -sTf "${DATASET_DIR}/coco2017" /coco$' run_and_time.sh
