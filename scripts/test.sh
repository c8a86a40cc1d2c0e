#!/usr/bin/env bash
# Install, build, and run the whole test suite, then the unit, p2p,
# failure and asan suites again under AddressSanitizer (scripts/asan.sh: an invalid
# access or a leak of ours fails them); ends with "N passed, N failed".
# With arguments (meson test's: suite names, test names, options) only
# those run, and not under AddressSanitizer.
set -uo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh || exit 1
./scripts/build.sh || exit 1
meson test -C build --print-errorlogs --num-processes 2 "$@"
rc=$?
logs=(build/meson-logs/testlog.json)
if [ $# -eq 0 ]; then
    ./scripts/asan.sh unit p2p failure asan
    rc_asan=$?
    [ $rc -eq 0 ] && rc=$rc_asan
    logs+=(build-asan/meson-logs/testlog.json)
fi
python3 - "${logs[@]}" <<'PY'
import json, sys
for path in sys.argv[1:]:
    res = [json.loads(l)["result"] for l in open(path) if l.strip()]
    ok = sum(r in ("OK", "EXPECTEDFAIL") for r in res)
    skip = sum(r == "SKIP" for r in res)
    what = "under AddressSanitizer" if "asan" in path else "tests"
    print(f"{what}: {ok} passed, {len(res) - ok - skip} failed, {skip} skipped")
PY
exit $rc
