#!/bin/sh
# Run p2p_test under a launcher with a bounded time.
# usage: run_p2p.sh ucollrun|mpirun LAUNCHER PROGRAM NP UCX_TLS [MODE [VAR=VALUE...]]
# (P2P_RUNS=N among the VAR=VALUE: the job N times, until one fails)
# MODEs "kill", "killwild" and "killrndv" pass when rank 0 reports PASS (the job has lost a rank, so
# the launcher's own exit status says nothing about the test).
kind=$1 launcher=$2 prog=$3 np=$4 tls=$5
mode=${6:-all}
shift 5
[ $# -gt 0 ] && shift
for kv in "$@"; do
    export "$kv"
done
export UCX_TLS="$tls"
# sanitized builds: only leaks of the libraries underneath are suppressed
: "${LSAN_OPTIONS:=suppressions=$(dirname "$0")/lsan.supp:print_suppressions=0}"
export LSAN_OPTIONS
if [ "$np" -gt 2 ]; then
    export UCOLL_WAIT=block  # oversubscribed: never spin
fi
case $kind in
ucollrun) set -- "$launcher" -n "$np" ;;
mpirun)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    set -- "$launcher" --allow-run-as-root --oversubscribe -np "$np" ;;
*) echo "unknown launcher kind $kind" >&2; exit 2 ;;
esac
# P2P_RUNS=N runs the job N times (a case that fails in some runs only),
# each bounded, until one fails
runs=${P2P_RUNS:-1} limit=150
[ "$runs" -gt 1 ] && limit=30
i=0
while [ $i -lt "$runs" ]; do
    out=$(timeout -k 5 $limit "$@" "$prog" "$mode" 2>&1)
    rc=$?
    i=$((i + 1))
    [ $rc -eq 0 ] || break
done
printf '%s\n' "$out"
[ "$runs" -gt 1 ] && echo "run_p2p.sh: run $i of $runs"
[ $rc -eq 124 ] && echo "run_p2p.sh: timed out" >&2
case $mode in kill*) killmode=1 ;; *) killmode=0 ;; esac
if [ $killmode = 1 ]; then
    printf '%s\n' "$out" | grep -q "p2p_test: PASS"
    exit $?
fi
[ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q "PASS" || exit 1
# with UCOLL_STATS=1: memory of unexpected eager messages stays within the
# credits of the np - 1 senders
if [ "${UCOLL_STATS:-0}" = 1 ]; then
    credits=${UCOLL_EAGER_CREDITS:-262144}
    printf '%s\n' "$out" | awk -v lim=$((credits * (np - 1))) '
        /stats:/ { n++; for (i = 1; i < NF; i++) if ($i == "peak" && $(i + 2) == "msgs") b = $(i + 3) + 0;
                   if (b > lim) { print "unexpected bytes " b " over " lim; bad = 1 } }
        END { exit (n == 0 || bad) }' || { echo "run_p2p.sh: stats check failed" >&2; exit 1; }
    # the rings of small messages: carry packets on shared memory unless
    # switched off, none otherwise; no rank takes more than was written
    case "$tls,${UCOLL_P2P_SHM:-auto}" in
    sm*,auto) want=used ;;
    *) want=unused ;;
    esac
    printf '%s\n' "$out" | awk -v want=$want '
        /stats:/ { for (i = 1; i < NF - 1; i++) {
                       if ($i == "ring" && $(i + 1) == "sent") s += $(i + 2);
                       if ($i == "received" && $(i - 1) ~ /^[0-9]+$/ && $(i - 2) == "sent" && $(i - 3) == "ring") r += $(i + 1) } }
        END { print "ring: " s " packets written, " r " taken (expected: " want ")";
              exit (want == "used" ? (s == 0 || r == 0 || r > s) : s != 0) }' ||
        { echo "run_p2p.sh: ring check failed" >&2; exit 1; }
fi
