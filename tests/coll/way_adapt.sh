#!/usr/bin/env bash
# The way of the shm reduce and allreduce rows chosen per call by
# measurement (UCOLL_SHM_WAY_ADAPT, progress/shm.h ucoll__shm_way_pick):
# every rank must take the same way at every call, or the call hangs or
# reduces the wrong data. ucoll_bench --check refills and checks every
# result of 100 calls per size, 16 KiB to 1 MiB, at 2, 3 and 4 ranks,
# with turn (the way changes every 32 calls, whatever the times), with
# the measured choice, and with auto (the choice at 2 ranks, where each
# has a core here, the model's way at 3 and 4). Then, with turn, each rank's log of the ways
# of a 128 KiB reduce at 3 ranks: the same sequence on every rank, both
# ways in it.
#   way_adapt.sh UCOLLRUN UCOLL_BENCH
set -uo pipefail
ucollrun=$1 bench=$2
. "$(dirname "$(readlink -f "$0")")/bench_check.sh"
fail=0
export UCOLL_WAIT=block
for mode in turn 1 auto; do
    for np in 2 3 4; do
        for op in reduce allreduce; do
            bench_check "$op at $np ranks, UCOLL_SHM_WAY_ADAPT=$mode" \
                env UCOLL_SHM_WAY_ADAPT="$mode" timeout 150 "$ucollrun" -n "$np" --timeout 120 \
                "$bench" "$op" --algo shm --check --iters 100 --min-size 16k --max-size 1m || fail=1
        done
    done
done
out=$(UCOLL_SHM_WAY_ADAPT=turn UCOLL_LOG_LEVEL=debug timeout 150 "$ucollrun" -n 3 --timeout 120 \
      "$bench" reduce --algo shm --check --iters 100 --min-size 128k --max-size 128k 2>&1)
seqs=$(for r in 0 1 2; do
           grep "^ucoll\[$r\].*reduce through shared memory" <<<"$out" |
               sed 's/.*shared memory, //; s/,.*//' | tr '\n' '/'
           echo
       done)
if [ "$(sort -u <<<"$seqs" | wc -l)" != 1 ] || [ "$(head -n 1 <<<"$seqs" | tr '/' '\n' | sort -u | grep -c .)" != 2 ]; then
    echo "FAIL: the ranks' ways of a 128 KiB reduce differ, or are not two:"
    cut -c1-300 <<<"$seqs"
    fail=1
else
    echo "ok: every rank took the same ways, $(head -n 1 <<<"$seqs" | tr '/' '\n' | sort -u | grep . | tr '\n' ' ')"
fi
exit $fail
