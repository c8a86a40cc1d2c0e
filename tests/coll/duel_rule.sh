#!/usr/bin/env bash
# A tuning rule that names the shm row of alltoall and
# reduce_scatter_block keeps its duel (UCOLL_SHM_DUEL; lib/algos/algos.c
# ucoll__algo_select): under such rules, with the row changed every 32
# calls, every result of duel.c is right and calls go through both rows;
# a rule that sets seg= fixes the shm row.
#   duel_rule.sh UCOLLRUN DUEL
set -uo pipefail
ucollrun=$1 duel=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
export UCOLL_WAIT=block UCOLL_SHM_DUEL=turn UCOLL_LOG_LEVEL=debug
printf 'alltoall:0-inf:@shm:np=1-64\nreduce_scatter_block:0-inf:@shm:np=1-64\n' >"$tmp/rules.txt"
UCOLL_TUNE_FILE=$tmp/rules.txt timeout 150 "$ucollrun" -n 3 --timeout 120 -x UCOLL_TUNE_FILE \
    "$duel" >"$tmp/out" 2>&1
if [ "$(grep -c ', 0 failed' "$tmp/out")" != 3 ] || ! grep -q "duelled: rival" "$tmp/out" ||
    ! grep -q "(tuning rule 0), timed against" "$tmp/out"; then
    grep -v "debug" "$tmp/out" | tail -20; echo "FAIL: a rule that names the shm row"; fail=1
else
    echo "ok: under a rule naming the shm row, $(grep -c 'duelled: rival' "$tmp/out") calls went through the rival, every result right"
fi
printf 'alltoall:0-inf:@shm:np=1-64:seg=65536\n' >"$tmp/rules.txt"
UCOLL_TUNE_FILE=$tmp/rules.txt timeout 150 "$ucollrun" -n 2 --timeout 120 -x UCOLL_TUNE_FILE \
    "$duel" >"$tmp/out" 2>&1
if [ "$(grep -c ', 0 failed' "$tmp/out")" != 2 ] || grep -q "alltoall.*duelled" "$tmp/out"; then
    grep -v "debug" "$tmp/out" | tail -20; echo "FAIL: a rule with seg= duelled"; fail=1
else
    echo "ok: a rule with seg= keeps the shm row"
fi
exit $fail
