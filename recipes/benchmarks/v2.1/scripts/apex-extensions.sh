# ${why}
set -eu
python - <<'PY'
import importlib.util
import sys

wanted = ${modules}
missing = [name for name in wanted if importlib.util.find_spec(name) is None]
if missing:
    sys.exit("apex-extensions.sh: apex was built without " + ", ".join(missing))
PY
