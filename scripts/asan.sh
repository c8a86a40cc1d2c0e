#!/usr/bin/env bash
# Build with AddressSanitizer (+ LeakSanitizer) in ./build-asan and run the
# test suite (or the suites named as arguments, e.g. `scripts/asan.sh p2p`).
# Leaks inside UCX, PMIx and hwloc themselves are suppressed by
# tests/lsan.supp; ours are not.
set -uo pipefail
cd "$(dirname "$0")/.."
[ -f build-asan/build.ninja ] || meson setup build-asan -Db_sanitize=address -Db_lundef=false \
    --buildtype=debug || exit 1
ninja -C build-asan || exit 1
# handle_segv=0: the launcher tests kill ranks with SIGSEGV on purpose and
# check that the launcher names the signal
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=86:handle_segv=0
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp:print_suppressions=0
args=()
for s in "$@"; do args+=(--suite "$s"); done
meson test -C build-asan --print-errorlogs --num-processes 2 --timeout-multiplier 3 "${args[@]}"
