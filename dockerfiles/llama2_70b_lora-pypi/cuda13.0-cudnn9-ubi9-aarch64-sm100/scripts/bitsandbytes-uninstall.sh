# NVIDIA's Dockerfile runs pip uninstall -y bitsandbytes after its requirements.txt. nemo-toolkit
# 2.5.0's llm extra brings bitsandbytes 0.46.0 on x86_64 only (its METADATA marks it
# platform_machine == "x86_64"): there pip removes it; on aarch64 pip finds none, says so and
# exits 0.
set -eu
python -m pip uninstall -y bitsandbytes
