#!/usr/bin/env bash
# bench/plot draws ucoll_sim's tables (a PNG with one line per algorithm).
#   plot.sh PLOT UCOLL_SIM
set -uo pipefail
plot=$1 sim=$2
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || { echo "SKIP: no matplotlib"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for a in binomial scag_rdbl twotree; do
    "$sim" -c bcast -a $a -m 1m -p 2,16,256,4096 -A 20e-6 -B 1e-10 >>"$tmp/sim.txt" || exit 1
done
out=$("$plot" sim "$tmp/sim.txt" -o "$tmp/sim.png") || { echo "FAIL: plot"; exit 1; }
echo "$out"
echo "$out" | grep -q "(3 algorithms)" || { echo "FAIL: expected 3 algorithms"; exit 1; }
[ "$(head -c 8 "$tmp/sim.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
    { echo "FAIL: not a PNG"; exit 1; }
echo "ok: bench/plot"
