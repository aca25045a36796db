# NVIDIA's v5.x run_and_time.sh reads its configuration from the environment: under Slurm the
# submitting shell sources config_<system>.sh and every task inherits its exports. mlcc's run
# manifests mount config_${DGXSYSTEM}.sh in the work directory instead; this wrapper, written
# into the work directory, sources it (exporting every value, as NVIDIA's files export theirs)
# and then runs NVIDIA's run_and_time.sh.
set -eu
cat > run_with_config.sh <<'SH'
#!/bin/bash
here=$(dirname "$0")
config="$here/config_${DGXSYSTEM:-MLCC}.sh"
if [ -f "$config" ]; then
  set -a
  # shellcheck disable=SC1090
  source "$config"
  set +a
fi
exec "$here/run_and_time.sh" "$@"
SH
chmod 0755 run_with_config.sh
