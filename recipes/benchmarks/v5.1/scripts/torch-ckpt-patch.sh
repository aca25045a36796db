# NVIDIA's Dockerfile patches the base's torch with pytorch_ckpt.patch (its checkpoint size
# patch), in the site-packages torch is imported from.
set -eu
site=$(python -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))')
patch --directory="$site" -p1 < pytorch_ckpt.patch
