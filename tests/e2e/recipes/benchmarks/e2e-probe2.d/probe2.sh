#!/bin/sh
# The second probe's own build step (its only difference from e2e-probe).
set -eu
echo "probe 2 built on $(uname -m)" > built
