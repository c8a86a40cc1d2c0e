#!/usr/bin/env bash
# tests/coll/kill_held.c: 3 ranks under ucollrun --enable-recovery, the
# bcast forced to linear; ranks 0 and 1 must report ok (rank 2 dies, and
# the job's status is its own).
#   run_kill_held.sh UCOLLRUN PROGRAM
set -uo pipefail
launcher=$1 prog=$2
out=$("$launcher" -n 3 --enable-recovery --timeout 30 -x UCOLL_WAIT=block -x UCOLL_BCAST_ALGO=linear \
      ${UCX_TLS:+-x UCX_TLS} "$prog" 2>&1)
rc=$?
for r in 0 1; do
    if ! grep -q "^kill_held: rank $r ok" <<<"$out"; then
        echo "$out"
        echo "FAIL: rank $r did not report ok (job status $rc)"
        exit 1
    fi
done
echo "$out"
echo "ok: a collective's message that its receiver's failure left untaken did not hold its sender"
