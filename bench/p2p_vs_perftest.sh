#!/bin/bash
# Compare ucoll's point-to-point with UCX's own ucx_perftest on this host:
# 8-byte and 4 MiB latency (ucoll_bench latency vs ucx_perftest -t tag_lat,
# half a round trip) and 4 MiB bandwidth (ucoll_bench bw vs ucx_perftest -t
# tag_bw), for UCX_TLS=sm,self and tcp,self. Each figure is the median of 3 runs, ucoll and perftest
# alternating. ucx_perftest prints MB/s in 2^20 B/s; it is converted to
# 1e6 B/s as ucoll_bench prints. Its "Final:" line gives, per figure, the
# average since its last once-a-second report and the overall average; the
# overall ones are taken (fields 5 and 7), as ucoll_bench's cover the whole
# run: a 4 MiB tag_bw of 1280 messages over TCP runs past a report, and its
# last interval alone measured 1.2x its overall bandwidth. Targets: latency
# ratio <= 1.05, bandwidth ratio >= 0.95. A row for reference sets the
# 8-byte latency beside ucx_perftest -t ucp_am_lat: ucoll sends small
# messages as UCX active messages and matches them itself, and UCX's own
# active-message ping-pong is that path's floor. Over TCP a further row sets
# ucoll with UCOLL_LIVENESS=ucx (UCX's peer error handling on its
# endpoints, as between nodes; on one node ucoll watches its peers' processes
# instead) beside ucx_perftest -e (the same mode): in UCX 1.13 that mode
# keeps a rendezvous to active messages on one TCP lane, where without it
# UCX puts the payload zero-copy and stripes it over every TCP interface it
# finds (here lo and eth0, both looping back on this host; ucx_info -e -u t
# / -u te -D net -P inter shows the lanes), for reference.
#
# usage: bench/p2p_vs_perftest.sh [BUILD_DIR]   (default: build)
set -u
BUILD=${1:-build}
BENCH=$BUILD/bench/ucoll_bench
RUNS=${RUNS:-3}
if [ ! -x "$BENCH" ]; then
    echo "no $BENCH: build first" >&2
    exit 1
fi
if [ -x "$BUILD/launcher/ucollrun" ]; then
    LAUNCH=("$BUILD/launcher/ucollrun" -n 2)
else
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    LAUNCH=(mpirun --allow-run-as-root -np 2)
fi
export UCOLL_WAIT=spin

median() { sort -g | awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]; else print "nan"}'; }

ucoll_fig() {   # mode size iters warmup -> figure of the single row
    timeout 300 "${LAUNCH[@]}" "$BENCH" "$1" --min-size "$2" --max-size "$2" \
        --iters "$3" --warmup "$4" 2>/dev/null | awk '!/^#/ && NF == 2 {print $2}'
}

perftest_fig() {   # test size iters field [extra option, e.g. -e]
    local port=$((20000 + RANDOM % 20000)) out
    timeout 120 ucx_perftest -p "$port" ${5:-} -t "$1" -s "$2" -n "$3" >/dev/null 2>&1 &
    local srv=$!
    sleep 0.5
    out=$(timeout 120 ucx_perftest localhost -p "$port" ${5:-} -t "$1" -s "$2" -n "$3" 2>/dev/null |
          awk -v f="$4" '/^Final:/ {print $f}')
    wait "$srv" 2>/dev/null
    echo "$out"
}

echo "# ucoll p2p vs ucx_perftest, $(date -u +%FT%TZ), launcher: ${LAUNCH[0]##*/}"
echo "# $(ucx_info -v | head -1)"
printf "# %-9s %-22s %12s %12s %8s %s\n" tls test ucoll perftest ratio target
status=0
for tls in sm,self tcp,self; do
    export UCX_TLS=$tls
    ul=(); pl=(); pa=(); uL=(); pL=(); ub=(); pb=(); pe=(); ue=()
    for ((i = 0; i < RUNS; i++)); do
        ul+=("$(ucoll_fig latency 8 20000 2000)")
        pl+=("$(perftest_fig tag_lat 8 20000 5)")
        # ucoll's small messages are UCX active messages, matched by ucoll:
        # UCX's own active-message ping-pong is the floor of that path
        pa+=("$(perftest_fig ucp_am_lat 8 20000 5)")
        uL+=("$(ucoll_fig latency 4194304 200 20)")
        pL+=("$(perftest_fig tag_lat 4194304 200 5)")
        ub+=("$(ucoll_fig bw 4194304 20 2)")
        pb+=("$(perftest_fig tag_bw 4194304 1280 7)")
        # between nodes ucoll's endpoints use UCX's peer error handling,
        # which costs UCX 1.13 bandwidth over TCP: ucoll in that mode
        # beside perftest in it (-e), for reference
        [ "$tls" = tcp,self ] && ue+=("$(UCOLL_LIVENESS=ucx ucoll_fig bw 4194304 20 2)")
        [ "$tls" = tcp,self ] && pe+=("$(perftest_fig tag_bw 4194304 1280 7 -e)")
    done
    echo "# $tls runs: ucoll lat ${ul[*]} us | perftest lat ${pl[*]} us | ucoll 4M lat ${uL[*]} us | perftest 4M lat ${pL[*]} us | ucoll bw ${ub[*]} MB/s | perftest bw ${pb[*]} MiB/s"
    mul=$(printf "%s\n" "${ul[@]}" | median)
    mpl=$(printf "%s\n" "${pl[@]}" | median)
    muL=$(printf "%s\n" "${uL[@]}" | median)
    mpL=$(printf "%s\n" "${pL[@]}" | median)
    mub=$(printf "%s\n" "${ub[@]}" | median)
    mpb=$(printf "%s\n" "${pb[@]}" | median | awk '{printf "%.2f", $1 * 1.048576}')
    lr=$(awk -v a="$mul" -v b="$mpl" 'BEGIN {printf "%.3f", (b > 0) ? a / b : 0}')
    Lr=$(awk -v a="$muL" -v b="$mpL" 'BEGIN {printf "%.3f", (b > 0) ? a / b : 0}')
    br=$(awk -v a="$mub" -v b="$mpb" 'BEGIN {printf "%.3f", (b > 0) ? a / b : 0}')
    lok=$(awk -v r="$lr" 'BEGIN {print (r > 0 && r <= 1.05) ? "ok" : "MISSED"}')
    Lok=$(awk -v r="$Lr" 'BEGIN {print (r > 0 && r <= 1.05) ? "ok" : "MISSED"}')
    bok=$(awk -v r="$br" 'BEGIN {print (r >= 0.95) ? "ok" : "MISSED"}')
    printf "  %-9s %-22s %12s %12s %8s %s\n" "$tls" "latency 8 B (us)" "$mul" "$mpl" "$lr" "<=1.05 $lok"
    printf "  %-9s %-22s %12s %12s %8s %s\n" "$tls" "latency 4 MiB (us)" "$muL" "$mpL" "$Lr" "<=1.05 $Lok"
    printf "  %-9s %-22s %12s %12s %8s %s\n" "$tls" "bandwidth 4 MiB (MB/s)" "$mub" "$mpb" "$br" ">=0.95 $bok"
    mpa=$(printf "%s\n" "${pa[@]}" | median)
    ar=$(awk -v a="$mul" -v b="$mpa" 'BEGIN {printf "%.3f", (b > 0) ? a / b : 0}')
    echo "# $tls perftest ucp_am_lat ${pa[*]} us"
    printf "  %-9s %-22s %12s %12s %8s %s\n" "$tls" "lat 8 B vs ucp_am_lat" "$mul" "$mpa" "$ar" \
        "(reference only)"
    if ((${#pe[@]})); then
        mue=$(printf "%s\n" "${ue[@]}" | median)
        mpe=$(printf "%s\n" "${pe[@]}" | median | awk '{printf "%.2f", $1 * 1.048576}')
        er=$(awk -v a="$mue" -v b="$mpe" 'BEGIN {printf "%.3f", (b > 0) ? a / b : 0}')
        echo "# $tls UCOLL_LIVENESS=ucx bw ${ue[*]} MB/s | perftest -e bw ${pe[*]} MiB/s"
        printf "  %-9s %-22s %12s %12s %8s %s\n" "$tls" "bw 4M, both UCX errh" "$mue" "$mpe" "$er" \
            "(reference only)"
    fi
    [ "$lok" = ok ] && [ "$Lok" = ok ] && [ "$bok" = ok ] || status=1
done
exit $status
