#!/usr/bin/env bash
# ucoll_info --explain: the default selection's ranking, from the runtime's
# own code: the first of the ranking is what the selection takes, a forced
# algorithm and a tuning file's model show, each algorithm shows the
# parameters it would run with, one node ranks the shared-memory rows
# (--no-shm: not), and the runtime logs the same ranking at debug level for
# each new call shape.
#   explain.sh UCOLL_INFO UCOLLRUN MULTI_CTX_PROGRAM
set -uo pipefail
info=$1 ucollrun=$2 world=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
out=$("$info" --explain bcast 1m -p 64 -A 20e-6 -B 1e-10) || { echo "FAIL: explain failed"; exit 1; }
echo "$out"
takes=$(echo "$out" | sed -n 's/.*the default selection takes \([a-z_]*\).*/\1/p')
first=$(echo "$out" | awk '$1 == "1." { print $2 }')
[ -n "$takes" ] && [ "$takes" = "$first" ] || { echo "FAIL: takes '$takes', ranked first '$first'"; fail=1; }
[ "$(echo "$out" | grep -c ' us ')" -ge 10 ] || { echo "FAIL: fewer than 10 ranked bcast algorithms"; fail=1; }
out=$(UCOLL_BCAST_ALGO=chain "$info" --explain bcast 1m -p 64)
echo "$out" | grep -q "takes chain" || { echo "$out"; echo "FAIL: forced chain not shown"; fail=1; }
printf 'model:alpha=0.001:beta=1e-9\nmodel.net:alpha=0.002\n' >"$tmp/tune"
out=$(UCOLL_TUNE_FILE=$tmp/tune "$info" --explain allreduce 8 -p 8)
echo "$out" | grep -q "alpha 0.001 s, beta 1e-09" || { echo "$out"; echo "FAIL: node model of the tuning file"; fail=1; }
out=$(UCOLL_TUNE_FILE=$tmp/tune "$info" --explain allreduce 8 -p 8 --net)
echo "$out" | grep -q "alpha 0.002 s, beta 2e-10" || { echo "$out"; echo "FAIL: network model of the tuning file"; fail=1; }
"$info" --explain nosuchop 8 >/dev/null 2>&1 && { echo "FAIL: unknown operation accepted"; fail=1; }
# the parameters: the segment size the model gives the pipeline (-S sets it),
# the radix of knomial, the shm row's way and chunk
row() { echo "$1" | awk -v id="$2" '$2 == id { print; exit }'; }
out=$("$info" --explain bcast 4m -p 4 --no-shm)
echo "$out" | grep -q "^ *shm  *cannot serve" || { echo "$out"; echo "FAIL: --no-shm still ranks shm"; fail=1; }
row "$out" pipeline | grep -q " seg=[0-9]" || { echo "$out"; echo "FAIL: no segment size for pipeline"; fail=1; }
row "$out" knomial | grep -q " radix=[2-8]" || { echo "$out"; echo "FAIL: no radix for knomial"; fail=1; }
# the radix: the model's best per call (2 where a round costs α, more where
# each round costs a wake-up), -R over it
out=$("$info" --explain bcast 8 -p 8 --no-shm)
row "$out" knomial | grep -q " radix=2" || { echo "$out"; echo "FAIL: knomial's radix, Hockney"; fail=1; }
out=$("$info" --explain bcast 8 -p 8 --no-shm -W 2e-5)
row "$out" knomial | grep -q " radix=[3-8]" || { echo "$out"; echo "FAIL: knomial's radix, oversubscribed"; fail=1; }
out=$("$info" --explain bcast 8 -p 8 --no-shm -W 2e-5 -R 2)
row "$out" knomial | grep -q " radix=2" || { echo "$out"; echo "FAIL: -R not knomial's radix"; fail=1; }
out=$("$info" --explain bcast 4m -p 4 -S 65536 --no-shm)
row "$out" pipeline | grep -q " seg=65536" || { echo "$out"; echo "FAIL: -S not the pipeline's segment"; fail=1; }
out=$("$info" --explain reduce 1m -p 4)
echo "$out" | grep -q "takes shm" || { echo "$out"; echo "FAIL: one node, reduce 1 MiB: not shm"; fail=1; }
row "$out" shm | grep -q " way=[a-z]" || { echo "$out"; echo "FAIL: no way for shm"; fail=1; }
# oversubscribed, pipelined to the root in chunks of 64 KiB (allreduce/shm.c)
out=$("$info" --explain reduce 1m -p 4 -W 2e-5)
row "$out" shm | grep -q " way=root seg=65536" || { echo "$out"; echo "FAIL: oversubscribed reduce: not root, 64 KiB"; fail=1; }
out=$(UCOLL_SHM=off "$info" --explain reduce 1m -p 4)
echo "$out" | grep -q "^ *shm  *cannot serve" || { echo "$out"; echo "FAIL: UCOLL_SHM=off still ranks shm"; fail=1; }
# the runtime's debug log ranks the algorithms at a new call shape
UCOLL_LOG_LEVEL=debug "$ucollrun" -n 2 --timeout 60 "$world" >"$tmp/log" 2>&1
grep -q "^ucoll\[0\] debug.*   1\. " "$tmp/log" || { grep debug "$tmp/log" | head; echo "FAIL: no ranking in the debug log"; fail=1; }
# its lines end where their words do (bench/model_error.sh reads them)
grep -q "^ucoll\[0\] debug.* cannot serve$" "$tmp/log" || { grep debug "$tmp/log" | head; echo "FAIL: no 'cannot serve' line ending the debug ranking's line"; fail=1; }
grep -q "^ucoll\[0\] debug.* $" "$tmp/log" && { grep "^ucoll\[0\] debug.* $" "$tmp/log" | head -3; echo "FAIL: trailing blanks in the debug log"; fail=1; }
[ $fail = 0 ] && echo "ok: explain"
exit $fail
