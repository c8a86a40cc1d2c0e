#!/usr/bin/env bash
# ucoll_bench --fresh (the input rewritten before each call, untimed):
# with --check, whose own refill must win, every result of 30 calls per
# size is right, through the default rows of the moving and the reducing
# collectives at 2 and 3 ranks; without --check it runs and says so in its
# header; with --chain (no room for an untimed rewrite) it is refused.
#   bench_fresh.sh UCOLLRUN UCOLL_BENCH
set -uo pipefail
ucollrun=$1 bench=$2
. "$(dirname "$(readlink -f "$0")")/bench_check.sh"
fail=0
for np in 2 3; do
    for op in bcast allreduce reduce alltoall scatter reduce_scatter_block; do
        bench_check "$op --fresh --check at $np ranks" \
            env UCOLL_WAIT=block timeout 120 "$ucollrun" -n "$np" --timeout 100 "$bench" "$op" \
            --fresh --check --iters 30 --min-size 8 --max-size 256k || fail=1
    done
done
out=$(UCOLL_WAIT=block timeout 60 "$ucollrun" -n 2 --timeout 50 "$bench" allreduce --fresh \
      --iters 20 --min-size 1k --max-size 64k 2>&1)
if [ $? -ne 0 ] || ! grep -q 'fresh=on' <<<"$out" || ! grep -q '^65536 ' <<<"$out"; then
    echo "FAIL: allreduce --fresh"
    tail -n 5 <<<"$out"
    fail=1
else
    echo "ok: allreduce --fresh"
fi
out=$(UCOLL_WAIT=block timeout 60 "$ucollrun" -n 2 --timeout 50 "$bench" bcast --fresh --chain 2>&1)
if [ $? -eq 0 ] || ! grep -q 'runs without --check or --fresh' <<<"$out"; then
    echo "FAIL: bcast --fresh --chain was not refused"
    tail -n 5 <<<"$out"
    fail=1
else
    echo "ok: bcast --fresh --chain refused"
fi
exit $fail
