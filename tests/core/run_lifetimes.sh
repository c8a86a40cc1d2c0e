#!/bin/sh
# Run one case of the lifetimes program under ucollrun with a bounded time.
# usage: run_lifetimes.sh LAUNCHER PROGRAM NP UCX_TLS MODE [ARG] [VAR=VALUE...]
# LAUNCHER "env": no launcher, the NP ranks meet through the env bootstrap
# (RANK, WORLD_SIZE, MASTER_ADDR), whose fence is an allgather of all ranks.
# The case passes when rank 0 reports PASS: finalize-dead loses a rank, so
# the launcher's exit status says nothing there; elsewhere it must be 0 too.
launcher=$1 prog=$2 np=$3 tls=$4 mode=$5
shift 5
arg=
if [ $# -gt 0 ] && [ "${1#*=}" = "$1" ]; then
    arg=$1
    shift
fi
for kv in "$@"; do
    export "$kv"
done
export UCX_TLS="$tls"
: "${LSAN_OPTIONS:=suppressions=$(dirname "$0")/../p2p/lsan.supp:print_suppressions=0}"
export LSAN_OPTIONS
if [ "$np" -gt 2 ]; then
    export UCOLL_WAIT=block # oversubscribed: never spin
fi
if [ "$launcher" = env ]; then
    unset PMIX_NAMESPACE PMIX_RANK PMIX_SERVER_URI4 PMIX_SERVER_URI41 PMIX_SERVER_URI3 \
          PMIX_SERVER_URI2 PMIX_SERVER_URI21 OMPI_COMM_WORLD_RANK
    export MASTER_ADDR=127.0.0.1 WORLD_SIZE="$np" UCOLL_BOOTSTRAP_TIMEOUT=30
    UCOLL_BOOTSTRAP_PORT=$(/usr/bin/python3 "$(dirname "$0")/../free_port.py")
    export UCOLL_BOOTSTRAP_PORT
    tmp=$(mktemp -d)
    r=1
    while [ $r -lt "$np" ]; do
        RANK=$r timeout -k 5 100 "$prog" "$mode" $arg >"$tmp/out.$r" 2>&1 &
        r=$((r + 1))
    done
    out=$(RANK=0 timeout -k 5 100 "$prog" "$mode" $arg 2>&1)
    rc=$?
    wait
    out=$(printf '%s\n' "$out"; cat "$tmp"/out.* 2>/dev/null)
    rm -rf "$tmp"
else
    out=$(timeout -k 5 100 "$launcher" -n "$np" "$prog" "$mode" $arg 2>&1)
    rc=$?
fi
printf '%s\n' "$out"
[ $rc -eq 124 ] && echo "run_lifetimes.sh: timed out" >&2
printf '%s\n' "$out" | grep -q "lifetimes: PASS" || exit 1
printf '%s\n' "$out" | grep -q "ERROR: AddressSanitizer" && exit 1
[ "$mode" = finalize-dead ] || [ $rc -eq 0 ]
