#!/usr/bin/env bash
# Two-level collectives on one machine (tests/coll/hier.c): layouts of
# "nodes" set through ucoll_init_oob's node ids, the two-level rows forced,
# then chosen by the model; the debug log must show that the two levels
# ran (and, with the model, that it picked them for a large allreduce).
#   run_hier.sh UCOLLRUN HIER
set -u
ucollrun=$1 hier=$2
fail=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

run() { # N LAYOUT K [env...]
    local n=$1 layout=$2 k=$3
    shift 3
    if ! env "$@" "$ucollrun" -n "$n" --timeout 150 "$hier" "$layout" "$k" >"$log" 2>&1; then
        echo "FAIL: -n $n $layout $k $*"
        tail -30 "$log"
        fail=1
        return 1
    fi
    echo "ok: -n $n $layout $k $*"
}

forced=(UCOLL_BARRIER_ALGO=hier UCOLL_BCAST_ALGO=hier UCOLL_REDUCE_ALGO=hier
        UCOLL_ALLREDUCE_ALGO=hier UCOLL_ALLGATHER_ALGO=hier UCOLL_WAIT=block)
run 4 block 2 "${forced[@]}" UCOLL_LOG_LEVEL=debug &&
    if ! grep -q "two levels, 2 nodes" "$log" || ! grep -q "allreduce: hier (forced)" "$log"; then
        echo "FAIL: the debug log does not show the two levels running"
        fail=1
    fi
run 5 cyclic 2 "${forced[@]}"
run 5 lone 1 "${forced[@]}"
run 6 block 3 "${forced[@]}"
run 4 block 2 "${forced[@]}" UCOLL_SHM=off
run 4 cyclic 2 "${forced[@]}" UCX_TLS=tcp,self
run 8 block 4 "${forced[@]}"
# many chunks (64, the most) of the large calls, several calls in flight
run 5 cyclic 2 "${forced[@]}" UCOLL_SEGMENT_SIZE=4096
run 6 block 2 "${forced[@]}" UCOLL_SEGMENT_SIZE=65536 UCX_TLS=tcp,self
# a timed-out two-level allreduce is withdrawn: rank 0, arriving late,
# changes nothing in the others' buffers after their calls returned
if env UCOLL_ALLREDUCE_ALGO=hier UCOLL_TIMEOUT=2 UCOLL_WAIT=block \
    "$ucollrun" -n 4 --timeout 90 "$hier" block 2 timeout >"$log" 2>&1 &&
    [ "$(grep -c ' ok$' "$log")" = 4 ]; then
    echo "ok: -n 4 block 2 timeout"
else
    echo "FAIL: -n 4 block 2 timeout"; grep -v " debug " "$log" | tail -20; fail=1
fi
# the model's own choice: two levels for the large allreduce
run 4 block 2 UCOLL_WAIT=block UCOLL_LOG_LEVEL=debug &&
    if ! grep -q "allreduce: hier (model" "$log"; then
        echo "FAIL: the model never chose the two levels"
        grep "allreduce: .*(model" "$log" | sort | uniq -c | head
        fail=1
    fi
exit $fail
