#!/usr/bin/env bash
# model_error.sh: how far the selection model is from the machine, per
# algorithm: bcast and allreduce measured under ucollrun next to the time
# the model predicts with parameters calibrated on this machine.
#
# For every rank count p, on this one node:
#   1. ucollrun -n p ucoll_tune --calibrate, RUNS times: alpha, beta
#      (ping-pong of rank 0 with a rank of its node), gamma, lambda (timed
#      kernels); each parameter's median goes into a fresh tuning file, which
#      is UCOLL_TUNE_FILE of every later step: the runtime (segment sizes and
#      radices come from the model) and the prediction use the same
#      parameters. It holds model lines only, no rules.
#   2. per operation and size, one job in the default selection at debug
#      level: the runtime's own ranking on the real communicator (rank 0's),
#      which says which rows can serve (ucoll_info --explain takes the
#      shared memory of one node as on; the job says whether it is).
#   3. per operation, algorithm of `ucoll_info -a` (less hier, which needs
#      several nodes) and size, one ucoll_bench job forced to the algorithm
#      (UCOLL_<OP>_ALGO), RUNS times in alternation; medians. A row that
#      cannot serve is not run (the runtime would fall back to another).
#   4. the prediction: UCOLL_TUNE_FILE=FILE ucoll_info --explain OP BYTES -p P,
#      plus -W UCOLL_MODEL_OVERSUB_ALPHA when p exceeds the machine's PUs (the
#      runtime then adds it to alpha and charges it as a wake-up); the
#      runtime's ranking of step 2 where explain has none. Where explain and
#      the runtime's ranking disagree by more than 1% the table says so (they
#      run the same code).
#
# Measured: ucoll_bench's max_us, the slowest rank's mean latency (OSU loop:
# each call timed on its own, a barrier between calls). The model predicts
# the time until the last rank is done, so that is the figure to hold it
# to (ucoll_tune's sweep measures the same); avg_us, OSU's mean over the
# ranks, is shown beside it. ratio = measured / predicted, flagged "!!"
# above 2 or below 0.5. Waiting is the runtime's default (UCOLL_WAIT=auto:
# spin with a PU per rank, else yield), as bench/vs_mpi.sh runs ucoll.
#
# usage: bench/model_error.sh [options]   (from the project root, after a build)
#   -p "P..."        rank counts (default "2 4")
#   -o OUTFILE       also write the table as Markdown to OUTFILE
#   --build DIR      build directory (default build)
#   -s "SIZES"       sizes in bytes, k/m suffixes (default "1k 64k 4m")
#   --ops "OPS"      operations (default "bcast allreduce")
#   -r RUNS          calibrations, and measurements of each row (medians; default 3)
#   --timeout S      limit of one job in seconds (default 120)
#   --keep DIR       keep tuning files, logs and raw.csv in DIR
# e.g. bench/model_error.sh -p "2 4" -o model-error.md --build build
#
# A measurement, not a test: a few minutes on 2 cores, figures that depend
# on the machine and on what else runs on it.
set -u

PS="2 4" OUTFILE='' BUILD=build SIZES="1k 64k 4m" OPS="bcast allreduce" RUNS=3 TMO=120 KEEP=
PYTHON=/usr/bin/python3

usage() { sed -n '/^# usage:/,/^# e\.g\./s/^# \{0,1\}//p' "$0"; }
die() { echo "model_error.sh: $*" >&2; exit 2; }
is_count() { [[ $1 =~ ^[0-9]+$ ]] && [ "$1" -ge 1 ]; }

while [ $# -gt 0 ]; do
    case $1 in
    -p) [ $# -ge 2 ] || die "-p needs a value"; PS=$2; shift ;;
    -o) [ $# -ge 2 ] || die "-o needs a value"; OUTFILE=$2; shift ;;
    --build) [ $# -ge 2 ] || die "--build needs a value"; BUILD=$2; shift ;;
    -s) [ $# -ge 2 ] || die "-s needs a value"; SIZES=$2; shift ;;
    --ops) [ $# -ge 2 ] || die "--ops needs a value"; OPS=$2; shift ;;
    -r) [ $# -ge 2 ] || die "-r needs a value"; RUNS=$2; shift ;;
    --timeout) [ $# -ge 2 ] || die "--timeout needs a value"; TMO=$2; shift ;;
    --keep) [ $# -ge 2 ] || die "--keep needs a value"; KEEP=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
    esac
    shift
done
for p in $PS; do
    if ! is_count "$p" || [ "$p" -lt 2 ]; then die "bad rank count '$p' (2 or more)"; fi
done
for op in $OPS; do
    case $op in bcast | allreduce) ;; *) die "unknown operation '$op' (bcast allreduce)" ;; esac
done
is_count "$RUNS" || die "bad -r '$RUNS'"
is_count "$TMO" || die "bad --timeout '$TMO'"
if [ -z "$PS" ] || [ -z "$OPS" ] || [ -z "$SIZES" ]; then die "no rank counts, operations or sizes"; fi

RUN=$BUILD/launcher/ucollrun BENCH=$BUILD/bench/ucoll_bench
TUNE=$BUILD/tools/ucoll_tune INFO=$BUILD/tools/ucoll_info
for f in "$RUN" "$BENCH" "$TUNE" "$INFO"; do
    [ -x "$f" ] || die "no $f: build first (meson setup $BUILD && ninja -C $BUILD)"
done

bytes_of() {  # 64k -> 65536
    local v=${1%[kKmMgG]} mul=1
    [[ $v =~ ^[0-9]+$ ]] || return 1
    case $1 in *[kK]) mul=1024 ;; *[mM]) mul=1048576 ;; *[gG]) mul=1073741824 ;; esac
    echo $((v * mul))
}
BYTES=()
for s in $SIZES; do
    if ! b=$(bytes_of "$s") || [ "$b" -lt 4 ]; then die "bad size '$s'"; fi
    BYTES+=("$b")
done

if [ -n "$KEEP" ]; then
    WORK=$KEEP
    mkdir -p "$WORK" || die "cannot create $WORK"
else
    WORK=$(mktemp -d) || die "no temporary directory"
    trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$WORK/logs"
RAW=$WORK/raw.csv PRED=$WORK/pred.csv
echo "p,op,algo,bytes,run,rc,avg_us,max_us" >"$RAW"
echo "p,op,algo,bytes,source,us" >"$PRED"

# the runtime adds UCOLL_MODEL_OVERSUB_ALPHA to alpha when a node holds more
# ranks than PUs (lib/context.c); explain must be told (-W)
PUS=$("$INFO" -t 2>/dev/null | sed -n 's/^machine: \([0-9]*\) PUs.*/\1/p' | head -n 1)
[ -n "$PUS" ] || PUS=$(nproc --all)
WAKE=$("$INFO" -c 2>/dev/null | sed -n "s/^UCOLL_MODEL_OVERSUB_ALPHA .* now '\([^']*\)'.*/\1/p")
[ -n "$WAKE" ] || die "cannot read UCOLL_MODEL_OVERSUB_ALPHA from $INFO -c"

algos_of() {  # op -> its rows that one node can run
    "$INFO" -a | awk -v op="$1:" '$0 == op {on = 1; next} /^[a-z_]+:$/ {on = 0}
                                  on && $1 != "hier" {print $1}'
}

# The ranking lines of rank 0's debug log for (op, bytes): "algo us" or
# "algo cannot" (a ranked line: "N. algo T us [seg=S radix=R way=W]").
ranking_of() {  # op bytes log
    awk -v op="$1:" -v b="$2" '
        !/^ucoll\[0\] debug algos\.c:[0-9]+: / {next}
        { sub(/^ucoll\[0\] debug algos\.c:[0-9]+: /, "") }
        / bytes, p [0-9]+$/ { on = ($1 == op && $(NF - 3) == b && !seen); if (on) seen = 1; next }
        on && /^ +[0-9]+\. / { print $2, ($4 == "us" && ($5 == "" || $5 ~ /=/)) ? $3 : "unmodelled" }
        on && / cannot serve$/ { print $1, "cannot" }' "$3"
}

START=$(date +%s)
DATE=$(date -u +%FT%TZ)
failures=()
{
    echo "# model_error.sh $DATE on $(hostname), $PUS PUs, ucoll $("$INFO" -v | awk 'NR == 1 {print $2}'), UCX $(ucx_info -v 2>/dev/null | awk 'NR == 1 {print $NF}')"
    echo "# UCOLL_WAIT=${UCOLL_WAIT:-auto} UCX_TLS=${UCX_TLS:-(UCX default)}; median of $RUNS run(s)"
} | tee "$WORK/info.txt" >&2

for p in $PS; do
    tune=$WORK/tune-p$p.txt
    rm -f "$tune" "$tune".*
    export -n UCOLL_TUNE_FILE
    unset UCOLL_BCAST_ALGO UCOLL_ALLREDUCE_ALGO
    echo "# p=$p: calibrating ($RUNS times)" >&2
    ok=1
    for ((r = 1; r <= RUNS; r++)); do
        if ! timeout -k 10 "$TMO" "$RUN" -n "$p" --timeout "$TMO" "$TUNE" --calibrate -o "$tune.$r" \
            >"$WORK/logs/calibrate-p$p-r$r.out" 2>&1 || ! grep -q '^model:' "$tune.$r"; then
            cat "$WORK/logs/calibrate-p$p-r$r.out" >&2
            ok=0
            break
        fi
        grep -v '^written' "$WORK/logs/calibrate-p$p-r$r.out" | sed 's/^/#   /' >&2
    done
    # one disturbed ping-pong at the largest sizes is enough to spoil beta
    # (the slope between the two largest): each parameter's median over the
    # runs goes last in the file, the line the runtime reads
    if [ $ok = 0 ] || ! "$PYTHON" - "$RUNS" "$tune" >"$WORK/logs/calibrate-p$p.err" 2>&1 <<'PY'; then
import statistics, sys
runs, out = int(sys.argv[1]), sys.argv[2]
text, vals = [], {}
for r in range(1, runs + 1):
    for line in open("%s.%d" % (out, r)):
        if line.startswith("model"):
            kind, *kv = line.strip().split(":")
            for k, v in (f.split("=") for f in kv):
                vals.setdefault(kind, {}).setdefault(k, []).append(float(v))
            line = "# run %d: %s" % (r, line)
        text.append(line)
with open(out, "w") as f:
    f.writelines(text)
    for kind, kv in vals.items():
        f.write(kind + "".join(":%s=%.4g" % (k, statistics.median(v)) for k, v in kv.items()) + "\n")
for kind, kv in vals.items():
    for k, v in kv.items():
        if min(v) > 0 and max(v) / min(v) > 2:
            print("# warning: %s %s differs %.1fx between the calibrations (%s): the machine is "
                  "not quiet" % (kind, k, max(v) / min(v), " ".join("%.3g" % x for x in v)))
PY
        cat "$WORK/logs/calibrate-p$p.err" >&2
        failures+=("p=$p: calibration failed")
        continue
    fi
    { grep '^model' "$tune" | sed "s/^/# p=$p median: /"; sed "s/^# /# p=$p /" "$WORK/logs/calibrate-p$p.err"; } |
        tee -a "$WORK/info.txt" >&2
    xw=()
    if [ "$p" -gt "$PUS" ]; then
        xw=(-W "$WAKE")
        echo "# p=$p: $p ranks on $PUS PUs: oversubscribed, alpha + $WAKE s (UCOLL_MODEL_OVERSUB_ALPHA)" |
            tee -a "$WORK/info.txt" >&2
    fi
    export UCOLL_TUNE_FILE=$tune

    for op in $OPS; do
        var=UCOLL_${op^^}_ALGO
        algos=$(algos_of "$op")
        declare -A serves=()
        for b in "${BYTES[@]}"; do
            log=$WORK/logs/rank-p$p-$op-$b
            UCOLL_LOG_LEVEL=debug timeout -k 10 "$TMO" "$RUN" -n "$p" --timeout "$TMO" "$BENCH" "$op" \
                --min-size "$b" --max-size "$b" --iters 1 --warmup 0 >"$log.log" 2>&1
            ranking_of "$op" "$b" "$log.log" >"$log.txt"
            [ -s "$log.txt" ] || failures+=("p=$p $op $b: no ranking in the runtime's debug log ($log.log)")
            while read -r a t; do
                [ "$t" = cannot ] || serves[$a,$b]=1
                [ "$t" = cannot ] || [ "$t" = unmodelled ] || echo "$p,$op,$a,$b,runtime,$t" >>"$PRED"
            done <"$log.txt"
            UCOLL_LOG_LEVEL=warn "$INFO" --explain "$op" "$b" -p "$p" "${xw[@]}" >"$WORK/logs/explain-p$p-$op-$b.txt" 2>&1 ||
                failures+=("p=$p $op $b: ucoll_info --explain failed")
            awk -v pre="$p,$op" -v b="$b" '/^ +[0-9]+\. / && $4 == "us" && $5 != "(not" {print pre "," $2 "," b ",explain," $3}' \
                "$WORK/logs/explain-p$p-$op-$b.txt" >>"$PRED"
        done
        n=$(wc -w <<<"$algos")
        echo "# p=$p $op: $n algorithms x ${#BYTES[@]} sizes x $RUNS runs" >&2
        for ((r = 1; r <= RUNS; r++)); do
            for a in $algos; do
                for b in "${BYTES[@]}"; do
                    if [ -z "${serves[$a,$b]:-}" ]; then  # the runtime would fall back
                        [ "$r" -gt 1 ] || echo "$p,$op,$a,$b,0,skip,," >>"$RAW"
                        continue
                    fi
                    log=$WORK/logs/bench-p$p-$op-$a-$b-r$r
                    env "$var=$a" timeout -k 10 "$TMO" "$RUN" -n "$p" --timeout "$TMO" "$BENCH" "$op" \
                        --min-size "$b" --max-size "$b" >"$log.out" 2>"$log.err"
                    rc=$?
                    row=$(awk -v b="$b" '!/^#/ && $1 == b && NF >= 4 {print $2 "," $4; exit}' "$log.out")
                    if [ "$rc" -ne 0 ] || [ -z "$row" ]; then
                        failures+=("p=$p $op $a $b run $r: exit $rc (log: $log.out/.err)")
                        row=,
                    fi
                    echo "$p,$op,$a,$b,$r,$rc,$row" >>"$RAW"
                done
            done
            echo "#   run $r done, $(($(date +%s) - START)) s" >&2
        done
        unset serves
    done
done
export -n UCOLL_TUNE_FILE

# The table: medians, predictions (explain; the runtime's ranking where
# explain has none), ratios, flags.
"$PYTHON" - "$RAW" "$PRED" "$WORK/info.txt" "${OUTFILE:-}" "$OPS" "$(($(date +%s) - START))" \
    "$0 -p \"$PS\" -s \"$SIZES\" --ops \"$OPS\" -r $RUNS --build $BUILD${OUTFILE:+ -o $OUTFILE}" <<'PY'
import csv, statistics, sys
raw, pred, info, outfile, ops, secs, cmd = sys.argv[1:8]
ops = ops.split()
meas, order = {}, []
for r in csv.DictReader(open(raw)):
    k = (int(r["p"]), r["op"], int(r["bytes"]), r["algo"])
    if k not in meas:
        meas[k] = {"avg": [], "max": [], "fail": 0, "skip": 0}
        order.append(k)
    if r["rc"] == "skip":
        meas[k]["skip"] = 1
    elif r["rc"] == "0" and r["max_us"]:
        meas[k]["avg"].append(float(r["avg_us"]))
        meas[k]["max"].append(float(r["max_us"]))
    else:
        meas[k]["fail"] += 1
pr = {}
for r in csv.DictReader(open(pred)):
    pr[(int(r["p"]), r["op"], int(r["bytes"]), r["algo"], r["source"])] = float(r["us"])

def hb(b):
    for u, n in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= n and b % n == 0:
            return "%d %s" % (b // n, u)
    return "%d B" % b

rows, flagged, disagree = [], [], []
order.sort(key=lambda k: (k[0], ops.index(k[1]) if k[1] in ops else 9, k[2]))
for k in order:
    p, op, b, a = k
    m = meas[k]
    avg = statistics.median(m["avg"]) if m["avg"] else None
    mx = statistics.median(m["max"]) if m["max"] else None
    e, rt = pr.get(k + ("explain",)), pr.get(k + ("runtime",))
    model, src = (e, "") if e is not None else (rt, "*") if rt is not None else (None, "")
    if e is not None and rt is not None and abs(e - rt) > 0.01 * max(e, rt):
        disagree.append("%s p=%d %s %s: explain %.3f us, runtime %.3f us" % (op, p, hb(b), a, e, rt))
        src = "?"
    ratio = mx / model if mx is not None and model else None
    flag = "!!" if ratio is not None and (ratio > 2 or ratio < 0.5) else ""
    nomeas = "cannot serve" if m["skip"] else "fail"
    cells = [op, str(p), hb(b), a,
             "%.2f" % avg if avg is not None else nomeas,
             "%.2f" % mx if mx is not None else nomeas,
             ("%.2f" % model if model is not None else "-") + src,
             "%.2f" % ratio if ratio is not None else "-", flag]
    rows.append(cells)
    if flag:
        flagged.append(cells)

hdr = ["op", "p", "bytes", "algorithm", "avg_us", "measured_us", "predicted_us", "ratio", ""]
w = [max(len(hdr[i]), *(len(r[i]) for r in rows)) if rows else len(hdr[i]) for i in range(len(hdr))]
def line(c):
    return "  ".join(c[i].ljust(w[i]) if i in (0, 3) else c[i].rjust(w[i]) for i in range(len(c))).rstrip()
print()
print(line(hdr))
for r in rows:
    print(line(r))
notes = ["measured = ucoll_bench max_us (the slowest rank's mean latency), avg_us = OSU's mean "
         "over the ranks; predicted = ucoll_info --explain with the calibrated tuning file "
         "(* = from the runtime's debug ranking, where explain has none); "
         "ratio = measured / predicted, !! above 2 or below 0.5.",
         "%d of %d rows off by more than 2x; %s s." % (len(flagged), len(rows), secs)]
for d in disagree:
    notes.append("explain and the runtime disagree (?): " + d)
print()
for n in notes:
    print("# " + n)
if outfile:
    with open(outfile, "w") as f:
        f.write("Model error per algorithm: measured latency against the model's prediction "
                "with calibrated parameters.\n\n```\n")
        f.write(open(info).read())
        f.write("# command: %s\n```\n\n" % cmd)
        f.write("| " + " | ".join(hdr[:-1] + ["off 2x"]) + " |\n")
        f.write("|---|---:|---:|---|---:|---:|---:|---:|:-:|\n")
        for r in rows:
            f.write("| " + " | ".join(r) + " |\n")
        f.write("\n" + "\n".join(n + "\n" for n in notes))
    print("# written to " + outfile)
PY
status=$?

if [ ${#failures[@]} -gt 0 ]; then
    status=1
    echo "# ${#failures[@]} failure(s):"
    printf '#   %s\n' "${failures[@]}"
    [ -n "$KEEP" ] || echo "# (--keep DIR keeps the logs)"
fi
exit $status
