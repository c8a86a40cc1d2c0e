#!/usr/bin/env bash
# ucoll_tune under a launcher: the calibration writes a model line that the
# runtime then uses (ucoll_info --explain shows it), the sweep writes rules
# that parse and cover every size, and a job runs with the file.
#   tune.sh UCOLLRUN UCOLL_TUNE UCOLL_INFO COLL_PROGRAM
set -uo pipefail
ucollrun=$1 tune=$2 info=$3 prog=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
f=$tmp/tune.txt
"$ucollrun" -n 2 --timeout 120 "$tune" --calibrate -o "$f" || { echo "FAIL: calibrate"; exit 1; }
"$ucollrun" -n 3 --timeout 200 "$tune" bcast,allreduce,barrier --max-size 4k --iters 20 -o "$f" ||
    { echo "FAIL: sweep"; exit 1; }
cat "$f"
alpha=$(sed -n 's/^model:alpha=\([^:]*\):.*/\1/p' "$f")
[ -n "$alpha" ] || { echo "FAIL: no model line"; fail=1; }
out=$(UCOLL_TUNE_FILE=$f "$info" --explain allreduce 8 -p 2 2>&1)
# explain prints 3 digits (C's rounding of the binary value, which bash's
# printf may round the other way): compare within 1%
shown=$(echo "$out" | sed -n 's/^model: alpha \([^ ]*\) s,.*/\1/p')
awk -v a="$alpha" -v b="$shown" 'BEGIN { exit !(b != "" && (a - b) / a < 0.01 && (b - a) / a < 0.01) }' ||
    { echo "$out"; echo "FAIL: the runtime does not use the calibrated alpha $alpha (shows '$shown')"; fail=1; }
for op in bcast allreduce barrier; do
    grep -q "^$op:0-.*:np=3-3" "$f" || { echo "FAIL: no $op rule from 0"; fail=1; }
    grep -q "^$op:[0-9]*-inf:" "$f" || { echo "FAIL: no $op rule to inf"; fail=1; }
done
UCOLL_TUNE_FILE=$f UCOLL_LOG_LEVEL=warn "$ucollrun" -n 3 --timeout 120 "$prog" 300 >"$tmp/out" 2>&1
if [ $? != 0 ] || grep -q "cannot parse" "$tmp/out" || [ "$(grep -c ', 0 failed' "$tmp/out")" != 3 ]; then
    cat "$tmp/out"; echo "FAIL: a job with the tuning file"; fail=1
fi
# with a tuning file set, the sweep's "default" is the selection under its
# rules (the check of a tuning); the file it writes must be another
printf 'bcast:0-inf:@linear:np=2-2\n' >"$tmp/rules.txt"
out=$(UCOLL_TUNE_FILE=$tmp/rules.txt "$ucollrun" -n 2 --timeout 120 -x UCOLL_TUNE_FILE "$tune" bcast \
      --max-size 64 --iters 20 -o "$tmp/out.txt" 2>&1)
n=$(echo "$out" | grep -c 'default/best')
[ "$n" -gt 0 ] && [ "$(echo "$out" | grep -c 'default linear ')" = "$n" ] ||
    { echo "$out"; echo "FAIL: the sweep's default does not follow UCOLL_TUNE_FILE's rule"; fail=1; }
UCOLL_TUNE_FILE=$tmp/rules.txt "$ucollrun" -n 2 --timeout 120 -x UCOLL_TUNE_FILE "$tune" bcast \
    --max-size 64 --iters 20 -o "$tmp/rules.txt" >"$tmp/out" 2>&1 &&
    { cat "$tmp/out"; echo "FAIL: the sweep wrote into the tuning file it reads"; fail=1; }
[ $fail = 0 ] && echo "ok: ucoll_tune"
exit $fail
