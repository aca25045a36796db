# ${why}
# NVIDIA's Dockerfile pip-uninstalls these from the image. pip here runs in mlcc's environment,
# which sees the base image's packages but owns only what the steps before installed into it:
# that is removed, and a copy the base image itself holds stays (pip says it is outside the
# environment, and leaves it)
set -eu
python -m pip uninstall -y ${packages}
