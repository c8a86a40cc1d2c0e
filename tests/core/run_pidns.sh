#!/usr/bin/env bash
# Liveness of same-node peers across pid namespaces:
#   run_pidns.sh UCOLLRUN PIDNS_PROGRAM N none|pid|pid-proc DEAD_RANK [UCX_TLS]
# Runs N ranks of the pidns program (tests/core/pidns.c) under ucollrun:
# after a while in which no live rank may be taken for dead, rank DEAD_RANK
# exits without finalizing and every other rank must see UCOLL_ERR_PEER
# from a receive, a broadcast and a barrier within seconds.
#   none      every rank in one pid namespace: all watch each other through
#             pids
#   pid       rank 1 in its own pid namespace (unshare --pid), keeping the
#             host's /proc: its pid means nothing to the others (it is 1
#             there, and kill(1, 0) always succeeds here), theirs nothing
#             to it; it and the others must use UCX's peer error handling
#   pid-proc  the same with its own /proc (unshare --mount-proc)
# The debug log says which watch each peer got. With UCX_TLS of shared
# memory alone (no tcp), UCX cannot serve peer error handling on one node:
# there the job must fail at once, saying so, rather than run unwatched.
# Exits 77 (skipped) where unshare --pid is not permitted.
set -uo pipefail
launcher=$1 prog=$2 n=$3 ns=$4 dead=$5 tls=${6:-}
nsrank=1
[ -n "$tls" ] && export UCX_TLS=$tls
export UCOLL_LOG_LEVEL=debug UCOLL_WAIT=block

case $ns in
none) unshare= ;;
pid) unshare="unshare --pid --fork --kill-child" ;;
pid-proc) unshare="unshare --pid --fork --kill-child --mount-proc" ;;
*) echo "unknown namespace mode $ns"; exit 2 ;;
esac
if [ -n "$unshare" ]; then
    if ! command -v unshare >/dev/null 2>&1; then
        echo "SKIP: no unshare(1) here"; exit 77
    fi
    if ! err=$($unshare true 2>&1); then
        echo "SKIP: '$unshare' is not permitted here: $err"; exit 77
    fi
fi

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
out=$dir/out
# ucollrun starts the same program for every rank: the wrapper starts rank
# $nsrank alone in new namespaces. With --fork the program is unshare's
# child, with the environment (PMIx client settings included) it inherits;
# --kill-child ends it should the launcher kill unshare.
cat >"$dir/wrap" <<EOF
#!/bin/sh
if [ -n "$unshare" ] && [ "\${PMIX_RANK:-}" = "$nsrank" ]; then
    exec $unshare "\$@"
fi
exec "\$@"
EOF
chmod +x "$dir/wrap"

start=$(date +%s)
timeout -k 5 60 "$launcher" -n "$n" --timeout 45 "$dir/wrap" "$prog" "$dead" >"$out" 2>&1
rc=$?
took=$(($(date +%s) - start))
cat "$out"
echo "run_pidns.sh: launcher exited $rc after ${took} s"
fail=0
if [ -n "$unshare" ] && [ -n "$tls" ] && [[ ",$tls," != *,tcp,* ]]; then
    if [ $rc -eq 0 ] || [ $rc -eq 124 ] ||
        ! grep -q "error: cannot connect to rank .*no transport in UCX_TLS offers" "$out"; then
        echo "FAIL: no clear error without a transport for peer error handling"; exit 1
    fi
    echo "ok: $n ranks, namespaces $ns, UCX_TLS=$tls: refused"
    exit 0
fi
for ((r = 0; r < n; r++)); do
    [ $r -eq "$dead" ] && continue
    if ! grep -q "^pidns: rank $r: PASS" "$out"; then
        echo "FAIL: rank $r did not pass"; fail=1
    fi
done
# which watch each rank gave each peer (lib/transport/ucx.c logs "connected
# to rank R (shm|net, pid watch|peer error handling...)")
for ((r = 0; r < n; r++)); do
    for ((p = 0; p < n; p++)); do
        [ $p -eq $r ] && continue
        line=$(grep "^ucoll\[$r\] debug .*connected to rank $p (" "$out" | head -n 1)
        if [ -n "$unshare" ] && { [ $p -eq $nsrank ] || [ $r -eq $nsrank ]; }; then
            want="peer error handling"
        else
            want="pid watch"
        fi
        case $line in
        *"$want"*) ;;
        *) echo "FAIL: rank $r watches rank $p otherwise than by $want: ${line:-no log line}"; fail=1 ;;
        esac
    done
done
[ $fail -eq 0 ] && echo "ok: $n ranks, namespaces $ns, rank $dead dies${tls:+, UCX_TLS=$tls}"
exit $fail
