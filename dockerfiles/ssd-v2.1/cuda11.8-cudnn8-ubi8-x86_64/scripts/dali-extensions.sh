# NVIDIA's Dockerfile builds its two DALI operators (csrc/dali_box_iou, csrc/dali_proposal_matcher)
# with `cmake .. && make` in builder stages and copies lib_box_iou.so and lib_proposal_matcher.so
# to /usr/local/lib, where dali.py loads them (plugin_manager.load_library). Their CMakeLists ask
# the installed DALI for its headers and library (nvidia.dali.sysconfig.get_compile_flags and
# get_lib_dir), so they build against this image's DALI wheel.
#
# They were written for NGC 22.09's DALI 1.17.0: they name ::dali::workspace_t<Backend> and
# ::dali::DeviceWorkspace, which DALI 1.26.0's headers (the PyPI wheel this image installs) no
# longer declare -- a GPU operator's SetupImpl and RunImpl take ::dali::Workspace there
# (include/dali/pipeline/operator/operator.h, pipeline/workspace/workspace.h). The operators are
# GPU-only (registered for ::dali::GPU), for which the old names meant that type: rename them, and
# fail if any is left.
set -eu
for name in box_iou proposal_matcher; do
    src=csrc/dali_${name}
    sed -i -e 's/::dali::workspace_t<Backend>/::dali::Workspace/g' -e 's/::dali::DeviceWorkspace/::dali::Workspace/g' \
        "$src"/*.h "$src"/*.cc "$src"/*.cu
    if grep -n -e 'workspace_t' -e 'DeviceWorkspace' "$src"/*.h "$src"/*.cc "$src"/*.cu; then
        echo "dali-extensions.sh: $src still names DALI 1.17's workspace types" >&2
        exit 1
    fi
    cmake -S "$src" -B "$src/build"
    make -C "$src/build" -j"${MAX_JOBS:-1}"
    install -m 0755 "$src/build/lib_${name}.so" "/usr/local/lib/lib_${name}.so"
    rm -rf "$src/build"
done
# loading registers the operators with DALI (no GPU needed): fail here if either does not
python - <<'PY'
import sys

import nvidia.dali.fn as fn
import nvidia.dali.plugin_manager as plugin_manager

for name in ("box_iou", "proposal_matcher"):
    plugin_manager.load_library(f"/usr/local/lib/lib_{name}.so")
    if not hasattr(fn, name):
        sys.exit(f"dali-extensions.sh: lib_{name}.so registered no {name} operator")
PY
