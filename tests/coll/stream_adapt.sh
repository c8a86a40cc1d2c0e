#!/usr/bin/env bash
# Streaming chosen by measurement (UCOLL_SHM_STREAM_ADAPT, progress/shm.h):
# every call of a size streams or not as the rank measured, so a run of
# calls of one size takes both ways (the second streamed, the third plain,
# then the better with the other tried every 32nd call). ucoll_bench
# --check refills and checks every result of 40 calls per size, from 64 B
# (UCOLL_SHM_STREAM_MIN=64) to 256 KiB, through the shm rows of bcast,
# allgather and alltoall at 2 and 3 ranks.
#   stream_adapt.sh UCOLLRUN UCOLL_BENCH
set -uo pipefail
ucollrun=$1 bench=$2
. "$(dirname "$(readlink -f "$0")")/bench_check.sh"
fail=0
for np in 2 3; do
    for op in bcast allgather alltoall; do
        bench_check "$op at $np ranks" \
            env UCOLL_WAIT=block UCOLL_SHM_STREAM_MIN=64 UCOLL_SHM_STREAM_ADAPT=1 \
            timeout 120 "$ucollrun" -n "$np" --timeout 100 "$bench" "$op" --algo shm --check \
            --iters 40 --min-size 64 --max-size 256k || fail=1
    done
done
exit $fail
