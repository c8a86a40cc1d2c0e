#!/usr/bin/env bash
# The data-movement collectives under a launcher, algorithms forced:
#   run_coll_data.sh ucollrun|mpirun LAUNCHER PROGRAM N SET [program args]
# SET k forces algorithm k (modulo the op's count) of every op through
# UCOLL_<OP>_ALGO and tests only the ops that set k reaches for the first
# time, so sets 0..5 together cover every algorithm once.
set -euo pipefail
kind=$1 launcher=$2 prog=$3 n=$4 set=$5
shift 5
declare -A algos=(
  [gather]="binomial linear"
  [gatherv]="linear binomial"
  [scatter]="binomial linear"
  [scatterv]="linear binomial"
  [allgather]="ring rdbl bruck neighbor gather_bcast shm"
  [allgatherv]="ring rdbl"
  [alltoall]="pairwise bruck scattered shm"
  [alltoallv]="pairwise scattered"
)
ops=() xflags=() forced=""
for op in gather gatherv scatter scatterv allgather allgatherv alltoall alltoallv; do
  read -ra list <<<"${algos[$op]}"
  var="UCOLL_${op^^}_ALGO"
  export "$var=${list[$((set % ${#list[@]}))]}"
  xflags+=(-x "$var")
  if ((set < ${#list[@]})); then
    ops+=("$op")
    forced+=" $op=${!var}"
  fi
done
if ((${#ops[@]} == 0)); then
  echo "set $set forces nothing new"; exit 0
fi
export UCOLL_WAIT=${UCOLL_WAIT:-block}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
case $kind in
ucollrun) cmd=("$launcher" -n "$n" --timeout 150 "$prog" "$@" "${ops[@]}") ;;
mpirun) cmd=(timeout 170 "$launcher" --allow-run-as-root --oversubscribe -np "$n"
             -x UCOLL_WAIT "${xflags[@]}" "$prog" "$@" "${ops[@]}") ;;
*) echo "unknown launcher kind $kind"; exit 2 ;;
esac
echo "forced:$forced"
if ! "${cmd[@]}" >"$out" 2>&1; then
  cat "$out"; echo "FAIL: $kind -n $n set $set"; exit 1
fi
cat "$out"
for ((r = 0; r < n; r++)); do
  if ! grep -q "^coll_data: rank $r of $n: [0-9]* cases, 0 failed" "$out"; then
    echo "FAIL: rank $r of $n did not report success"; exit 1
  fi
done
echo "ok: $kind -n $n set $set"
