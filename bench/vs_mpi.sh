#!/usr/bin/env bash
# vs_mpi.sh: ucoll's collectives side by side with Open MPI's and MPICH's on
# this machine, with the same rank count and the same UCX transports.
#
# What it runs, for every operation, rank count p and run:
#   ucoll     build/launcher/ucollrun -n P build/bench/ucoll_bench OP ...
#   Open MPI  mpirun.openmpi ... -np P --mca pml ucx (pml_ucx_tls/devices any,
#             btl self, osc ^ucx, mpi_yield_when_idle 1) build/bench/mpi_bench_ompi OP ...
#   MPICH     mpirun.mpich -np P build/bench/mpi_bench_mpich OP ...   (ch4:ucx)
# all three under the same UCX_TLS and each under `timeout`. ucoll_bench and
# mpi_bench measure alike (OSU style): per size, warm-up calls, then timed
# calls, each followed by a barrier; every rank averages its own latency and
# the avg_us column is the mean of those averages over the ranks. "bytes" is
# the whole vector for bcast, reduce, allreduce and the input of
# reduce_scatter_block, one rank's block for allgather, one pair's block for
# alltoall.
#
# Method: the libraries alternate (ucoll, Open MPI, MPICH, ucoll, ...) RUNS
# times, and each figure is the median of avg_us over the runs. A library
# whose benchmark was not built (no MPI compiler wrapper at configure time)
# is skipped with a message. A failed run (non-zero exit, timeout, missing
# rows) is reported with its log, and a size it did not measure shows "fail".
# ucoll/best is ucoll's median over the better of Open MPI's and MPICH's.
#
# Output: one table per operation and p, then a Markdown summary; in the
# output directory: raw.csv (every row of every run), runs.csv (one line per
# run: exit status, rows, log, and the round trip of a cache line between
# CPUs 0 and 1 just before it, bench/core_rtt.c: on a virtual machine the
# host may move the CPUs closer or apart while the benchmark runs, which
# moved shared-memory figures by up to 1.9x here), medians.csv, summary.md
# (with the least and largest round trip), info.txt, logs/ and one PNG per
# operation (bench/plot_vs_mpi.py, Debian's python3-matplotlib).
#
# usage: bench/vs_mpi.sh [options]      (from the project root, after a build)
#   -o "OPS"         operations (default: bcast allreduce reduce allgather
#                    alltoall reduce_scatter_block barrier); also gather,
#                    scatter and bcast_chain (bcast with --chain: roots 0 and
#                    p-1 alternate with no barrier between calls, so each
#                    figure is a broadcast's latency end to end, a ping-pong
#                    at p = 2)
#   -p "P..."        rank counts (default: "2 4")
#   --min-size B     smallest size (default 8; k, m, g suffixes)
#   --max-size B     largest size (default 64m for bcast and allreduce, 1m
#                    for the others)
#   -r RUNS          runs per library (default 3)
#   -l "LIBS"        libraries, among ucoll openmpi mpich (default all three;
#                    ucoll always runs). At p above the cores MPICH's busy
#                    polling makes its runs last minutes: -l "ucoll openmpi"
#                    then gives ucoll/best against Open MPI alone
#   -b DIR           build directory (default build)
#   -t TLS           UCX_TLS for all three (default sm,self)
#   --timeout S      limit of one run in seconds (default 600)
#   --out DIR        results (default bench-results/<timestamp>)
#   --fresh          every library rewrites its input before each call,
#                    untimed (an application's new data each call); without
#                    it the input stays the same from call to call (OSU)
#   Every library's input varies along the vector (--varied: no two
#   64-byte stretches alike; bench/varied.h), so that ucoll's shm rows,
#   which leave unwritten the stretches of their regions that already
#   hold the same bytes, cannot profit from a fill that repeats along the
#   vector, as an application's data would not let them.
# e.g. bench/vs_mpi.sh -o "bcast allreduce" -p 2 --max-size 64k -r 1
#
# When p exceeds the cores, each library's way of waiting (ucoll's
# UCOLL_WAIT, Open MPI's mpi_yield_when_idle, MPICH's busy polling) decides
# the figures, and MPICH's runs take long (about 8 ms a barrier at p=4 on
# 2 cores; the defaults' p=4 part then runs for an hour or more).
#
# A measurement, not part of the test suite: it takes minutes, and its
# figures depend on the machine and on what else runs on it.
set -u

OPS="bcast allreduce reduce allgather alltoall reduce_scatter_block barrier"
PS="2 4"
MIN=8
MAX=
RUNS=3
BUILD=build
TLS=sm,self
TMO=600
OUT=
FRESH=
KNOWN_OPS=" barrier bcast bcast_chain reduce allreduce gather scatter allgather alltoall reduce_scatter_block "
LIBS="ucoll openmpi mpich"
WANT=$LIBS
PYTHON=/usr/bin/python3
HERE=$(dirname "$0")

usage() { sed -n '/^# usage:/,/^# e\.g\./s/^# \{0,1\}//p' "$0"; }
die() { echo "vs_mpi.sh: $*" >&2; exit 2; }
is_size() { [[ $1 =~ ^[0-9]+[kKmMgG]?$ ]]; }
is_count() { [[ $1 =~ ^[0-9]+$ ]] && [ "$1" -ge 1 ]; }

while [ $# -gt 0 ]; do
    case $1 in
    -o) [ $# -ge 2 ] || die "-o needs a value"; OPS=$2; shift ;;
    -p) [ $# -ge 2 ] || die "-p needs a value"; PS=$2; shift ;;
    --min-size) [ $# -ge 2 ] || die "--min-size needs a value"; MIN=$2; shift ;;
    --max-size) [ $# -ge 2 ] || die "--max-size needs a value"; MAX=$2; shift ;;
    -r) [ $# -ge 2 ] || die "-r needs a value"; RUNS=$2; shift ;;
    -l) [ $# -ge 2 ] || die "-l needs a value"; WANT=$2; shift ;;
    -b) [ $# -ge 2 ] || die "-b needs a value"; BUILD=$2; shift ;;
    -t) [ $# -ge 2 ] || die "-t needs a value"; TLS=$2; shift ;;
    --timeout) [ $# -ge 2 ] || die "--timeout needs a value"; TMO=$2; shift ;;
    --out) [ $# -ge 2 ] || die "--out needs a value"; OUT=$2; shift ;;
    --fresh) FRESH=--fresh ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
    esac
    shift
done
for op in $OPS; do
    [[ $KNOWN_OPS == *" $op "* ]] || die "unknown operation '$op' (one of:${KNOWN_OPS% })"
done
for p in $PS; do
    is_count "$p" || die "bad rank count '$p'"
done
if [ -z "$OPS" ] || [ -z "$PS" ]; then die "no operations or no rank counts"; fi
is_size "$MIN" || die "bad --min-size '$MIN'"
[ -z "$MAX" ] || is_size "$MAX" || die "bad --max-size '$MAX'"
is_count "$RUNS" || die "bad -r '$RUNS'"
is_count "$TMO" || die "bad --timeout '$TMO'"

UCOLLRUN=$BUILD/launcher/ucollrun
for f in "$UCOLLRUN" "$BUILD/bench/ucoll_bench"; do
    [ -x "$f" ] || die "no $f: build first (./scripts/build.sh)"
done
declare -A BIN=([ucoll]=$BUILD/bench/ucoll_bench [openmpi]=$BUILD/bench/mpi_bench_ompi
                [mpich]=$BUILD/bench/mpi_bench_mpich)
declare -A LAUNCHER=([ucoll]=$UCOLLRUN [openmpi]=mpirun.openmpi [mpich]=mpirun.mpich)
declare -A NAME=([ucoll]=ucoll [openmpi]="Open MPI" [mpich]=MPICH)
for lib in $WANT; do
    case " $LIBS " in *" $lib "*) ;; *) die "-l: unknown library '$lib' (ucoll openmpi mpich)" ;; esac
done
active=()
for lib in $LIBS; do
    if [ "$lib" != ucoll ] && [[ " $WANT " != *" $lib "* ]]; then
        echo "# ${NAME[$lib]} not run (-l)" >&2
    elif [ ! -x "${BIN[$lib]}" ]; then
        echo "# ${NAME[$lib]} skipped: no ${BIN[$lib]} (its compiler wrapper was not found when $BUILD was configured)" >&2
    elif ! command -v "${LAUNCHER[$lib]}" >/dev/null; then
        echo "# ${NAME[$lib]} skipped: no ${LAUNCHER[$lib]} on PATH" >&2
    else
        active+=("$lib")
    fi
done

OUT=${OUT:-bench-results/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT/logs" || die "cannot create $OUT"
RAW=$OUT/raw.csv RUNSCSV=$OUT/runs.csv MED=$OUT/medians.csv SUMMARY=$OUT/summary.md
echo "op,p,library,run,bytes,avg_us,min_us,max_us" >"$RAW"
echo "op,p,library,run,exit,rows,seconds,log,core_rtt_ns" >"$RUNSCSV"
echo "op,p,bytes,ucoll,openmpi,mpich,ucoll_over_best" >"$MED"

export UCX_TLS=$TLS
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
DATE=$(date -u +%FT%TZ)

max_of() {  # op -> its largest size
    if [ -n "$MAX" ]; then echo "$MAX"
    elif [ "$1" = bcast ] || [ "$1" = bcast_chain ] || [ "$1" = allreduce ]; then echo 64m
    else echo 1m; fi
}

version_of() {  # lib -> its version
    case $1 in
    ucoll) "$BUILD/tools/ucoll_info" -v 2>/dev/null | awk 'NR == 1 {print $2}' ;;
    openmpi) mpirun.openmpi --version 2>/dev/null | awk 'NR == 1 {print $NF}' ;;
    mpich) mpichversion 2>/dev/null | awk '/^MPICH (Version|Device):/ {k = $2; sub(/^[^:]*:[ \t]*/, "")
                                           if (k == "Version:") v = $0; else d = " (" $0 ")"}
                                           END {print v d}' ;;
    esac
}

{
    echo "# ucoll vs Open MPI vs MPICH, $DATE, $(hostname), $(nproc) cores"
    echo "# UCX_TLS=$TLS, median of $RUNS run(s), sizes $MIN..${MAX:-64m (bcast, allreduce) / 1m}"
    line="#"
    for lib in "${active[@]}"; do line+=" ${NAME[$lib]} $(version_of "$lib"),"; done
    echo "$line UCX $(ucx_info -v 2>/dev/null | awk 'NR == 1 {print $NF}')"
    echo "# command: $0 -o \"$OPS\" -p \"$PS\" --min-size $MIN${MAX:+ --max-size $MAX} -r $RUNS -b $BUILD -t $TLS --timeout $TMO --out $OUT${FRESH:+ $FRESH}"
} | tee "$OUT/info.txt"

# The cache line's round trip between CPUs 0 and 1 now, in ns (empty where
# core_rtt was not built or cannot pin).
core_rtt() {
    [ -x "$BUILD/bench/core_rtt" ] && "$BUILD/bench/core_rtt" 2>/dev/null | awk '$NF == "ns" {print $(NF - 1)}'
}

# One run of one library: its rows go to raw.csv, its status to runs.csv.
failures=()
run_one() {  # lib op p run
    local lib=$1 op=$2 p=$3 r=$4 max cmd log rc rows t0 secs rtt
    max=$(max_of "$op")
    case $lib in
    ucoll) cmd=("$UCOLLRUN" -n "$p" "${BIN[$lib]}") ;;
    openmpi) cmd=(mpirun.openmpi --allow-run-as-root --oversubscribe -np "$p" -x UCX_TLS
                  --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any
                  --mca btl self --mca osc ^ucx --mca mpi_yield_when_idle 1 "${BIN[$lib]}") ;;
    mpich) cmd=(mpirun.mpich -np "$p" "${BIN[$lib]}") ;;
    esac
    if [ "$op" = bcast_chain ]; then
        cmd+=(bcast --chain --min-size "$MIN" --max-size "$max")
    else
        cmd+=("$op" --min-size "$MIN" --max-size "$max" --varied $FRESH)
    fi
    log=$OUT/logs/$op-p$p-$lib-r$r
    echo "${cmd[*]}" >"$log.cmd"
    rtt=$(core_rtt)
    t0=$(date +%s.%N)
    timeout -k 10 "$TMO" "${cmd[@]}" >"$log.out" 2>"$log.err" </dev/null
    rc=$?
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
    rows=$(awk -v pre="$op,$p,$lib,$r" '
        !/^#/ && NF == 4 && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9.]+$/ {print pre "," $1 "," $2 "," $3 "," $4}
        ' "$log.out" | tee -a "$RAW" | wc -l)
    echo "$op,$p,$lib,$r,$rc,$rows,$secs,$log,$rtt" >>"$RUNSCSV"
    if [ "$rc" -ne 0 ] || [ "$rows" -eq 0 ]; then
        local why="exit $rc"
        [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && why="timed out after ${TMO} s"
        failures+=("$op p=$p ${NAME[$lib]} run $r: $why, $rows rows (log: $log.out/.err)")
        echo "  FAIL ${NAME[$lib]} run $r: $why, $rows rows; last lines of $log.err:" >&2
        tail -n 3 "$log.err" | sed 's/^/    /' >&2
    else
        printf '  %-8s run %d: %d rows, %s s\n' "$lib" "$r" "$rows" "$secs" >&2
    fi
}

# Medians of one (op, p) as medians.csv lines: per library the median of
# avg_us over the runs, "fail" where a run lacks the size, empty if skipped.
medians() {  # op p
    awk -F, -v op="$1" -v p="$2" -v active=" ${active[*]} " -v libs="$LIBS" '
    function median(k, n,   i, j, t, a) {
        for (i = 1; i <= n; i++) a[i] = val[k, i]
        for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
            t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    FNR == 1 { file++; next }
    $1 != op || $2 != p { next }
    file == 1 { nruns[$3]++; next }
    { k = $3 SUBSEP $5; val[k, ++cnt[k]] = $6 + 0
      if (!($5 in seen)) { seen[$5]; size[++ns] = $5 + 0 } }
    END {
        nl = split(libs, L, " ")
        for (i = 2; i <= ns; i++) for (j = i; j > 1 && size[j - 1] > size[j]; j--) {
            t = size[j]; size[j] = size[j - 1]; size[j - 1] = t }
        if (ns == 0) size[++ns] = "-"
        for (s = 1; s <= ns; s++) {
            line = op "," p "," size[s]; best = ""; u = ""
            for (l = 1; l <= nl; l++) {
                k = L[l] SUBSEP size[s]
                if (index(active, " " L[l] " ") == 0) v = ""
                else if (cnt[k] < nruns[L[l]] || cnt[k] == 0) v = "fail"
                else { v = median(k, cnt[k]); v = sprintf(v < 10 ? "%.3f" : "%.2f", v) }
                if (L[l] == "ucoll") u = v
                else if (v != "" && v != "fail" && (best == "" || v + 0 < best + 0)) best = v
                line = line "," v
            }
            r = (u != "" && u != "fail" && best != "" && best + 0 > 0) ? sprintf("%.2f", u / best) : "-"
            print line "," r
        }
    }' "$RUNSCSV" "$RAW"
}

print_table() {  # medians.csv lines on stdin
    awk -F, '{ for (i = 4; i <= 7; i++) if ($i == "") $i = "-"
               printf "%-12s %12s %12s %12s %11s\n", $3, $4, $5, $6, $7 }'
}

nlib=${#active[@]}
total=0
for op in $OPS; do for p in $PS; do total=$((total + RUNS * nlib)); done; done
n=0
for op in $OPS; do
    for p in $PS; do
        echo "# $op p=$p: $RUNS x (${active[*]}), sizes $MIN..$(max_of "$op") (run $((n + 1))..$((n + RUNS * nlib)) of $total)" >&2
        for ((r = 1; r <= RUNS; r++)); do
            for lib in "${active[@]}"; do
                run_one "$lib" "$op" "$p" "$r"
            done
        done
        n=$((n + RUNS * nlib))
        lines=$(medians "$op" "$p")
        echo "$lines" >>"$MED"
        echo
        echo "# $op p=$p, UCX_TLS=$TLS: median avg_us of $RUNS run(s)"
        printf "%-12s %12s %12s %12s %11s\n" bytes ucoll openmpi mpich ucoll/best
        echo "$lines" | print_table
    done
done

# The Markdown summary, to paste into a note.
{
    echo
    echo "ucoll vs Open MPI vs MPICH on $(hostname) ($(nproc) cores), $DATE, UCX_TLS=$TLS:"
    echo "median over $RUNS run(s) of the mean latency over ranks, in µs (OSU-style loop)."
    awk -F, 'NR > 1 && $9 != "" { v = $9 + 0; if (n++ == 0 || v < lo) lo = v; if (v > hi) hi = v }
             END { if (n) printf "cache line round trip between CPUs 0 and 1 before each run: %.0f-%.0f ns (runs.csv)\n", lo, hi }' "$RUNSCSV"
    echo
    echo "| op | p | bytes | ucoll | Open MPI | MPICH | ucoll / best |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    awk -F, 'function hb(b) {
                 if (b !~ /^[0-9]+$/) return b
                 if (b >= 1048576 && b % 1048576 == 0) return b / 1048576 " MiB"
                 if (b >= 1024 && b % 1024 == 0) return b / 1024 " KiB"
                 return b " B" }
             NR > 1 { for (i = 4; i <= 7; i++) if ($i == "") $i = "-"
                      printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, hb($3), $4, $5, $6, $7 }' "$MED"
} | tee "$SUMMARY"

status=0
if [ ${#failures[@]} -gt 0 ]; then
    status=1
    echo
    echo "# ${#failures[@]} failed run(s):"
    printf '#   %s\n' "${failures[@]}"
fi

if "$PYTHON" -c 'import matplotlib' 2>/dev/null; then
    echo
    "$PYTHON" "$HERE/plot_vs_mpi.py" --tls "$TLS" --date "$DATE" --runs "$RUNS" "$MED" "$OUT" ||
        echo "# plotting failed" >&2
else
    echo "# no PNGs: $PYTHON cannot import matplotlib (Debian package python3-matplotlib)" >&2
fi
echo "# results in $OUT"
exit $status
