#!/usr/bin/env bash
# Every input of algorithm selection is the same on every rank:
#   run_agree.sh UCOLLRUN COLL_REPEAT_PROGRAM WORLD_PROGRAM
# 1. Ranks 0 and 1 see an 8-PU machine (HWLOC_SYNTHETIC), ranks 2 and 3 the
#    real one (oversubscribed with 4 ranks on 2 PUs), as two nodes of
#    different sizes would: their models would choose different algorithms
#    and hang; agreed at init, they choose alike and every result is right.
# 2. A selection setting that differs on one rank fails init on every rank,
#    naming the variable.
set -uo pipefail
ucollrun=$1 repeat=$2 world=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
wrap=$(dirname "$(readlink -f "$0")")/rank_env.sh
fail=0
export UCOLL_WAIT=block UCOLL_TIMEOUT=60

export RANK_ENV_0="HWLOC_SYNTHETIC=8" RANK_ENV_1="HWLOC_SYNTHETIC=8"
if ! "$ucollrun" -n 4 --timeout 100 -x RANK_ENV_0 -x RANK_ENV_1 "$wrap" "$repeat" 2000 \
        >"$tmp/out" 2>&1; then
    cat "$tmp/out"; echo "FAIL: mixed oversubscription"; fail=1
elif [ "$(grep -c "cases, 0 failed" "$tmp/out")" != 4 ]; then
    cat "$tmp/out"; echo "FAIL: mixed oversubscription: not every rank passed"; fail=1
else
    echo "ok: ranks that see 8 and 2 PUs select alike"
fi
unset RANK_ENV_0 RANK_ENV_1

for var in UCOLL_RADIX=3 UCOLL_BCAST_ALGO=chain UCOLL_MODEL_ALPHA=1e-5 UCOLL_SHM_WAY=sliced \
        UCOLL_SHM_WAY_ADAPT=1 UCOLL_SHM_DUEL=0; do
    export RANK_ENV_2="$var"
    "$ucollrun" -n 4 --timeout 60 -x RANK_ENV_2 "$wrap" "$world" 4 >"$tmp/out" 2>&1
    rc=$?
    name=${var%%=*}
    if [ $rc = 0 ] || ! grep -q "$name differs between rank 0 and rank 2" "$tmp/out"; then
        cat "$tmp/out"; echo "FAIL: $var on rank 2 only: rc $rc"; fail=1
    else
        echo "ok: $var on rank 2 only fails init ($(grep -c "$name differs" "$tmp/out") ranks say so)"
    fi
done
exit $fail
