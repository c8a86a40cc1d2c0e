#!/usr/bin/env bash
# ucoll_tune --merge: three jobs' tuning files into one. Per size, the rule
# more than half chose (algorithm and parameters as written, each file's
# first matching rule voting); none where no choice has a majority (or
# "no rule" has); per model field the median; bad input refused. With
# UCOLLRUN given, a job runs under the merged file and takes its rules.
#   tune_merge.sh UCOLL_TUNE [UCOLLRUN UCOLL_BENCH]
set -uo pipefail
tune=$(realpath "$1") ucollrun=${2:+$(realpath "$2")} bench=${3:+$(realpath "$3")}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
cd "$tmp" || exit 1
cat >a.txt <<'E'
# job a
model:alpha=2e-06:beta=1e-10:gamma=1e-10:lambda=8e-11:wake=5e-06
bcast:0-2048:@binomial:np=3-3
bcast:2048-inf:@scag_ring:np=3-3:seg=65536
allreduce:0-inf:@shm:np=3-3:way=sliced
bcast:0-inf:@linear:np=3-3
E
cat >b.txt <<'E'
model:alpha=3e-06:beta=2e-10:gamma=1e-10:lambda=9e-11
bcast:0-1k:@binomial:np=3-3  bcast:1k-inf:@scag_ring:np=3-3:seg=65536
allreduce:0-100000:@shm:np=3-3:way=oneshot
allreduce:100000-inf:@rabenseifner:np=3-3
barrier:0-inf:@linear
E
cat >c.txt <<'E'
model:alpha=9e-06:beta=3e-10:gamma=2e-10:lambda=7e-11:wake=7e-06
model:alpha=4e-06:beta=3e-10:gamma=2e-10:lambda=7e-11:wake=7e-06
bcast:0-4096:@knomial:np=3-3:radix=4
bcast:4096-inf:@scag_ring:np=3-3:seg=65536
allreduce:0-100000:@shm:np=3-3:way=oneshot
reduce:0-inf:@binomial:np=3-3
barrier:0-inf:@linear
E
"$tune" --merge a.txt b.txt c.txt -o m.txt || { echo "FAIL: merge exited $?"; exit 1; }
cat m.txt
# bcast 0-1k: binomial (a, b); 1k-2k: binomial, scag_ring, knomial: none;
# 2k-inf: scag_ring (a from 2k, b, c from 4k); a's last bcast rule never
# matches (its first ones cover every size). allreduce to 100000: oneshot
# (b, c); beyond: sliced, rabenseifner, none: none. reduce: c alone, the
# others "no rule": none. barrier (no np=): linear (b, c). model: the last
# line of each file, per field the median; wake in two of three files
# (5e-6, 7e-6): 6e-6.
want='model:alpha=3e-06:beta=2e-10:gamma=1e-10:lambda=8e-11:wake=6e-06
bcast:0-1024:@binomial:np=3-3
bcast:2048-inf:@scag_ring:seg=65536:np=3-3
allreduce:0-100000:@shm:way=oneshot:np=3-3
barrier:0-inf:@linear'
got=$(grep -v '^#' m.txt)
[ "$got" = "$want" ] || { printf 'want:\n%s\ngot:\n%s\n' "$want" "$got"; echo "FAIL: merged rules"; fail=1; }
grep -q '^#   1024-2048 B: no choice of more than half' m.txt ||
    { echo "FAIL: the interval without a majority is not marked"; fail=1; }
# two files that disagree everywhere: no rule at all
"$tune" --merge a.txt c.txt -o two.txt >/dev/null || { echo "FAIL: merge of two"; fail=1; }
[ "$(grep -c '^bcast:' two.txt)" = 1 ] && grep -q '^bcast:4096-inf:@scag_ring' two.txt ||
    { cat two.txt; echo "FAIL: two files: only where both agree"; fail=1; }
# refused: one file, the output among the inputs, an unreadable file, a bad rule
for args in "a.txt -o x.txt" "a.txt b.txt -o a.txt" "a.txt nofile -o x.txt" "a.txt b.txt"; do
    # shellcheck disable=SC2086
    "$tune" --merge $args >out 2>&1 && { cat out; echo "FAIL: --merge $args accepted"; fail=1; }
done
printf 'bcast:0-inf:@binomial\nbcast:zz-1:@x\n' >bad.txt
"$tune" --merge a.txt bad.txt -o x.txt >out 2>&1
[ $? != 0 ] && grep -q 'bad.txt:2: cannot parse' out || { cat out; echo "FAIL: a bad rule accepted"; fail=1; }
# what the runtime would ignore (its own parser says): an unknown way, a
# radix that is no number, a field it does not know, a streaming threshold
# of 1-63 bytes or no number
for rule in 'allreduce:0-inf:@shm:way=foo' 'bcast:0-inf:@knomial:radix=x' 'bcast:0-inf:@linear:k=2' \
    'bcast:0-inf:@shm:stream=63' 'bcast:0-inf:@shm:stream=x'; do
    printf 'bcast:0-inf:@binomial\n%s\n' "$rule" >bad.txt
    "$tune" --merge a.txt bad.txt -o x.txt >out 2>&1
    [ $? != 0 ] && grep -q 'bad.txt:2: cannot parse' out ||
        { cat out; echo "FAIL: $rule accepted"; fail=1; }
done
cp a.txt keep.txt
"$tune" --merge a.txt b.txt -o a.txt >/dev/null 2>&1
cmp -s a.txt keep.txt || { echo "FAIL: a refused merge changed its input"; fail=1; }
grep -q '^#   0-inf B: most files have no rule here' m.txt ||
    { echo "FAIL: reduce, a rule in one file of three, is not marked"; fail=1; }
if [ -n "$ucollrun" ]; then
    out=$(UCOLL_TUNE_FILE=$tmp/m.txt UCOLL_LOG_LEVEL=debug UCX_TLS=sm,self \
          "$ucollrun" -n 3 --timeout 60 "$bench" bcast --min-size 512 --max-size 8192 --iters 2 \
          --warmup 0 2>&1)
    r=$(echo "$out" | grep 'ucoll\[0\].*bcast: ' | sed 's/.*bcast: \([a-z_]*\) (\([a-z]*\).*, \([0-9]*\) bytes.*/\3 \1 \2/' | sort -un | tr '\n' ' ')
    [ "$r" = "512 binomial tuning 1024 binomial tuning 2048 scag_ring tuning 4096 scag_ring tuning 8192 scag_ring tuning " ] ||
        [ "$(echo "$r" | sed 's/1024 [a-z_]* [a-z]* //')" = "512 binomial tuning 2048 scag_ring tuning 4096 scag_ring tuning 8192 scag_ring tuning " ] ||
        { echo "$out" | tail -20; echo "got: $r"; echo "FAIL: a job under the merged file"; fail=1; }
    echo "$out" | grep -q 'cannot parse' && { echo "FAIL: the runtime cannot parse the merged file"; fail=1; }
fi
[ $fail = 0 ] && echo "ok: ucoll_tune --merge"
exit $fail
