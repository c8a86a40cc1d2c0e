#!/usr/bin/env bash
# The simulator against the cost formulas, where the formula is exact in
# the Hockney model: the ratio sim/formula within 2%, and rounds as the
# critical path in messages (ceil(log2 p) for a binomial tree).
#   sim_formula.sh UCOLL_SIM
set -uo pipefail
sim=$1
fail=0
A=20e-6 B=1e-10
# coll algorithm p-list
checks=(
  "bcast binomial 64,100,1024"
  "bcast bintree 64,100,1000,4097"
  "bcast pipe_bintree 64,100,1000"
  "bcast twotree 64,1024"
  "bcast pipeline 64,1024"
  "bcast scag_rdbl 64,1024"
  "bcast knomial 64,1024"
  "bcast karytree 11,64,1000"
  "bcast balanced 11,64,1000"
  "bcast vchain 11,64,1000"
  "bcast kchain_opt 11,64,1000"
  "bcast pipe_knomial 11,64,1000"
  "allreduce knomial 64,1024,4096"
  "allreduce sra_knomial 4,16,64,256,1024"
  "allreduce rdbl 64,1024"
  "allreduce rabenseifner 64,1024"
  "allreduce ring 64"
  "reduce binomial 64,1024"
  "barrier knomial_tree 4,16,64,1024"
  "reduce knomial 5,64,100,1024"
  "bcast circulant 64,1024"
)
for c in "${checks[@]}"; do
    read -r coll algo plist <<<"$c"
    out=$("$sim" -c "$coll" -a "$algo" -m 1m -p "$plist" -A $A -B $B) || { echo "FAIL: $c: ucoll_sim failed"; fail=1; continue; }
    while read -r _ al p _ rounds _ _ _ _ ratio _ rest; do
        if [ -n "$rest" ] || awk -v r="$ratio" 'BEGIN { exit !(r < 0.98 || r > 1.02) }'; then
            echo "FAIL: $coll $al p=$p: sim/formula $ratio $rest"; fail=1
        else
            echo "ok: $coll $al p=$p: sim/formula $ratio, rounds $rounds"
        fi
        if [ "$al" = vchain ] && [ "$p" = 11 ] && [ "$rounds" != 4 ]; then
            echo "FAIL: vchain p=11: rounds $rounds, expected 4 (chains 4, 3, 2, 1)"; fail=1
        fi
        if [ "$al" = binomial ] && [ "$coll" = bcast ]; then
            want=$(awk -v p="$p" 'BEGIN { r = 0; while (2 ^ r < p) r++; print r }')
            [ "$rounds" = "$want" ] || { echo "FAIL: binomial p=$p: rounds $rounds, expected $want"; fail=1; }
        fi
    done < <(echo "$out" | grep -v '^#')
done
# segment size and radix from the environment, as the runtime reads them
a=$("$sim" -c bcast -a pipeline -m 1m -p 64 -A $A -B $B | awk '!/^#/ { print $6 }')
b=$(UCOLL_SEGMENT_SIZE=8k "$sim" -c bcast -a pipeline -m 1m -p 64 -A $A -B $B | awk '!/^#/ { print $6 }')
[ "$b" = $((128 * 63)) ] && [ "$a" != "$b" ] || { echo "FAIL: UCOLL_SEGMENT_SIZE=8k: $b messages (model: $a)"; fail=1; }
c=$(UCOLL_RADIX=8 "$sim" -c bcast -a knomial -m 1k -p 64 -A $A -B $B | awk '!/^#/ { print $5 }')
[ "$c" = 14 ] || { echo "FAIL: UCOLL_RADIX=8 knomial at p=64: rounds $c, expected 14 (2 levels of 7 sends)"; fail=1; }
# circulant: n - 1 + ceil(log2 p) rounds. One block: ceil(log2 p) rounds
# for any p; 16 blocks of 64k: 15 + ceil(log2 p) messages sent by the
# busiest rank for any p, and as many rounds on the critical path where p
# is a power of two
for p in 3 100 1000 1024; do
    q=$(awk -v p="$p" 'BEGIN { r = 0; while (2 ^ r < p) r++; print r }')
    r=$("$sim" -c bcast -a circulant -m 8 -p $p -A $A -B $B | awk '!/^#/ { print $5 }')
    [ "$r" = "$q" ] || { echo "FAIL: circulant p=$p, one block: rounds $r, expected $q"; fail=1; }
    r=$(UCOLL_SEGMENT_SIZE=64k "$sim" -c bcast -a circulant -m 1m -p $p -A $A -B $B | awk '!/^#/ { print $7, $5 }')
    want="$((15 + q)) $([ $p = 1024 ] && echo $((15 + q)) || echo "${r#* }")"
    [ "$r" = "$want" ] || { echo "FAIL: circulant p=$p, 16 blocks: max sends, rounds $r, expected $want"; fail=1; }
done
# LogGP: one message costs o + (m-1)G + L + o; a root sending to 63 ranks
# in turn is bound by its injections, max(g, o + (m-1)G) apart
t=$("$sim" -c bcast -a binomial -m 1m -p 2 -P 16e-6,2e-6,4e-6,1e-10 | awk '!/^#/ { print $8 }')
awk -v t="$t" 'BEGIN { e = 2e-6 + 1048575e-10 + 16e-6 + 2e-6; exit !(t > e * 0.999 && t < e * 1.001) }' ||
    { echo "FAIL: LogGP message time $t"; fail=1; }
t=$("$sim" -c bcast -a linear -m 8 -p 64 -P 16e-6,1e-6,4e-6,1e-10 | awk '!/^#/ { print $8 }')
awk -v t="$t" 'BEGIN { e = 62 * 4e-6 + 1e-6 + 7e-10 + 16e-6 + 1e-6; exit !(t > e * 0.999 && t < e * 1.001) }' ||
    { echo "FAIL: LogGP gap-bound linear bcast $t"; fail=1; }
[ $fail = 0 ] && echo "ok: simulator agrees with the formulas"
exit $fail
