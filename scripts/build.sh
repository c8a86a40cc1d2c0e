#!/usr/bin/env bash
# Configures (once) and builds ucoll in ./build.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f build/build.ninja ] || meson setup build --buildtype=debugoptimized
ninja -C build -j "$(nproc)"
