#!/usr/bin/env bash
# Weight broadcast through torch.distributed: backend "ucoll" against "gloo"
# in the same run, alternating (ucoll, gloo, ucoll, gloo, ...), REPS times,
# for p in PS, model sizes in SIZES, dtypes in DTYPES; each run is
# examples/weight_broadcast.py under ucollrun (bucketed nonblocking
# broadcasts of the whole state_dict, every tensor checked bit for bit) and
# reports the median of its --iters timed broadcasts, in each mode of MODES:
# "copy" (rank 0 flattens the tensors into bucket buffers, the others copy
# them out: a copy of every byte at each end), "flat" (the tensors are
# views of the bucket buffers, set up once: no copies) and "coalesced"
# (each bucket's tensors in one broadcast of the list, the model as it is:
# no copies with ucoll; gloo takes one tensor per device, so it flattens, as
# torch's own coalesced broadcast does). Then, per case, the
# median over the runs for each backend and the ratio ucoll/gloo, and
# ucoll_bench bcast of the same total bytes in one message (its average
# over --iters calls), with the ratio weight_broadcast/ucoll_bench.
#
#   bench/weight_bcast_vs_gloo.sh [-b BUILDDIR] [-r REPS] [-p "2 4"]
#       [-s "100M 400M"] [-d "float32 bfloat16"] [-i ITERS] [-m BUCKET_MB]
#       [-M "copy flat coalesced"]
#
# Targets (issue 9): ucoll <= 0.5x gloo's time at p = 4 with 1.6 GB
# (400M float32), and within 1.3x of ucoll_bench bcast (bucketing and Python
# costing little: the "flat" and "coalesced" modes; "copy" adds two memory
# copies of it all).
# Writes bench-results/weight_bcast_<timestamp>/{runs.txt,summary.md}.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build reps=3 ps="2 4" sizes="100M 400M" dtypes="float32 bfloat16" iters=3 bucket=64 modes="copy flat coalesced"
while getopts "b:r:p:s:d:i:m:M:h" o; do
  case $o in
  b) build=$(cd "$OPTARG" && pwd) ;;
  r) reps=$OPTARG ;;
  p) ps=$OPTARG ;;
  s) sizes=$OPTARG ;;
  d) dtypes=$OPTARG ;;
  i) iters=$OPTARG ;;
  m) bucket=$OPTARG ;;
  M) modes=$OPTARG ;;
  *) sed -n '2,25p' "$0"; exit 2 ;;
  esac
done
PY=/usr/bin/python3
ucollrun=$build/launcher/ucollrun bench=$build/bench/ucoll_bench
for f in "$ucollrun" "$bench" "$root/examples/weight_broadcast.py"; do
  [[ -e $f ]] || { echo "missing $f (build first: meson setup build && ninja -C build)" >&2; exit 1; }
done
compgen -G "$build/python/ucoll/_ucoll_torch*.so" >/dev/null ||
  { echo "no $build/python/ucoll/_ucoll_torch*.so: configured without torch?" >&2; exit 1; }
export PYTHONPATH=$build/python OMP_NUM_THREADS=1
out=$root/bench-results/weight_bcast_$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
runs=$out/runs.txt
echo "# $(date -Is) $(uname -n), $(getconf _NPROCESSORS_ONLN) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$runs"
echo "# UCOLL_WAIT=${UCOLL_WAIT:-auto} UCX_TLS=${UCX_TLS:-default} iters=$iters bucket=${bucket}MiB" | tee -a "$runs"

for p in $ps; do
  for size in $sizes; do
    for dt in $dtypes; do
      for ((r = 1; r <= reps; r++)); do
        for mode in $modes; do
          flag=; [[ $mode == flat || $mode == coalesced ]] && flag=--$mode
          for be in ucoll gloo; do
            line=$("$ucollrun" -n "$p" --timeout 900 $PY "$root/examples/weight_broadcast.py" \
                     --backend "$be" --params "$size" --dtype "$dt" --iters "$iters" \
                     --bucket-mb "$bucket" $flag 2>&1 | grep '^RESULT' || true)
            [[ -n $line ]] || line="RESULT backend=$be p=$p dtype=$dt mode=$mode FAILED"
            echo "$line size=$size rep=$r" | tee -a "$runs"
          done
        done
      done
      # ucoll_bench: the same bytes as one broadcast, or fewer where its
      # three buffers of the size on each of the p ranks would not fit in
      # three quarters of the free memory; compared by bytes per second
      bytes=$(grep "p=$p .*dtype=$dt .*size=$size " "$runs" | grep -o 'bytes=[0-9]*' | head -1 | cut -d= -f2)
      if [[ -n $bytes ]]; then
        avail=$(($(awk '/MemAvailable/ {print $2}' /proc/meminfo) * 1024))
        fit=$((1 << 20))
        while ((fit * 2 * 4 * p <= avail)); do fit=$((fit * 2)); done
        n=$((bytes < fit ? bytes : fit))
        us=$("$ucollrun" -n "$p" --timeout 900 "$bench" bcast --min-size "$n" \
               --max-size "$n" --iters "$iters" --warmup 1 | awk '!/^#/ && NF >= 2 {print $2}' || true)
        echo "BENCH p=$p size=$size dtype=$dt bytes=$n avg_us=${us:-FAILED}" | tee -a "$runs"
      fi
    done
  done
done

# summary: medians over the runs (each run's value is its own median)
$PY - "$runs" <<'EOF' | tee "$out/summary.md"
import re, statistics, sys
runs = open(sys.argv[1]).read().splitlines()
res, bench = {}, {}
for l in runs:
    kv = dict(re.findall(r"(\w+)=(\S+)", l))
    if l.startswith("RESULT") and "median_s" in kv and kv.get("check") == "ok":
        res.setdefault((kv["p"], kv["size"], kv["dtype"], kv["mode"], kv["backend"]), []).append(
            (float(kv["median_s"]), int(kv["bytes"])))
    elif l.startswith("BENCH") and kv.get("avg_us", "FAILED") != "FAILED":
        bench[(kv["p"], kv["size"], kv["dtype"])] = (float(kv["avg_us"]) / 1e6, int(kv["bytes"]))
print("| p | model | dtype | mode | GB | ucoll s (GB/s) | gloo s (GB/s) | ucoll/gloo | ucoll_bench bcast MB: s (GB/s) | ucoll/ucoll_bench (per byte) |")
print("|---|---|---|---|---|---|---|---|---|---|")
cases = sorted({k[:4] for k in res}, key=lambda c: (int(c[0]), c[1], c[2], c[3]))
med = lambda c, b: statistics.median(t for t, _ in res[c + (b,)]) if c + (b,) in res else None
for c in cases:
    nb = next(v for k, v in res.items() if k[:4] == c)[0][1]
    mu, mg, b = med(c, "ucoll"), med(c, "gloo"), bench.get(c[:3])
    cell = lambda t: f"{t:.3f} ({nb / t / 1e9:.2f})" if t else "failed"
    ratio = lambda a, d: f"{a / d:.2f}" if a and d else "-"
    bcell, bratio = "-", "-"
    if b:
        bcell = f"{b[1] / 1e6:.0f}: {b[0]:.3f} ({b[1] / b[0] / 1e9:.2f})"
        bratio = ratio(mu, b[0] * nb / b[1])
    print(f"| {c[0]} | {c[1]} | {c[2]} | {c[3]} | {nb / 1e9:.2f} | {cell(mu)} | {cell(mg)} | "
          f"{ratio(mu, mg)} | {bcell} | {bratio} |")
EOF
echo "runs: $runs"
