#!/usr/bin/env bash
# Bootstrap and wiring under a launcher:
#   run_world.sh ucollrun|mpirun LAUNCHER_PATH WORLD_PROGRAM N [UCX_TLS]
# Checks that every rank printed its line with the right rank and size.
set -euo pipefail
kind=$1 launcher=$2 prog=$3 n=$4 tls=${5:-}
[ -n "$tls" ] && export UCX_TLS=$tls
out=$(mktemp)
trap 'rm -f "$out"' EXIT
case $kind in
ucollrun) cmd=("$launcher" -n "$n" --timeout 60 "$prog" "$n") ;;
mpirun) cmd=(timeout 90 "$launcher" --allow-run-as-root --oversubscribe -np "$n" "$prog" "$n") ;;
*) echo "unknown launcher kind $kind"; exit 2 ;;
esac
if ! "${cmd[@]}" >"$out" 2>&1; then
    cat "$out"; echo "FAIL: $kind -n $n exited non-zero"; exit 1
fi
cat "$out"
for ((r = 0; r < n; r++)); do
    if ! grep -q "^world: rank $r of $n, local $r of $n, reached $((n - 1)) peers" "$out"; then
        echo "FAIL: rank $r of $n did not report"; exit 1
    fi
done
echo "ok: $kind -n $n ${tls:+UCX_TLS=$tls}"
