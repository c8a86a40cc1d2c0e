#!/usr/bin/env bash
# ucoll_info --explain: the default selection's ranking, from the runtime's
# own code: the first of the ranking is what the selection takes, a forced
# algorithm and a tuning file's model show, and the runtime logs the same
# ranking at debug level for each new call shape.
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
# the runtime's debug log ranks the algorithms at a new call shape
UCOLL_LOG_LEVEL=debug "$ucollrun" -n 2 --timeout 60 "$world" >"$tmp/log" 2>&1
grep -q "^ucoll\[0\] debug.*   1\. " "$tmp/log" || { grep debug "$tmp/log" | head; echo "FAIL: no ranking in the debug log"; fail=1; }
[ $fail = 0 ] && echo "ok: explain"
exit $fail
