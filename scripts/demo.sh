#!/usr/bin/env bash
# The main job: install, build, and run a 4-rank job on this machine under
# ucollrun (bootstrap, wiring, a weight broadcast and a gradient allreduce).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
exec build/launcher/ucollrun -n 4 --tag-output --timeout 120 build/examples/demo "$@"
