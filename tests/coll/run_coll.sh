#!/usr/bin/env bash
# The reducing collectives under a launcher, algorithms forced:
#   run_coll.sh ucollrun|mpirun LAUNCHER PROGRAM N SET [program args]
# SET k forces algorithm k (modulo the op's count) of every op through
# UCOLL_<OP>_ALGO and tests only the ops that set k reaches for the first
# time, so sets 0..10 together cover every algorithm once. SET "nb" runs the
# nonblocking test with the model's choices. SET "shm" forces the rows that
# run through shared memory (id shm) of barrier, bcast, reduce,
# allreduce and reduce_scatter_block, "shm-nb" forces them in the
# nonblocking test, "shm-kill" with
# the last rank dying (the others must report UCOLL_ERR_PEER). With
# COLL_EXPECT_SHM=on|off the ranks log at debug level and every rank must
# say that the world's shared-memory collectives are on (off). With
# COLL_VALGRIND=SUPPRESSIONS (ucollrun only) every rank runs under valgrind
# memcheck: an invalid access or a definite leak of ours fails the test.
set -euo pipefail
kind=$1 launcher=$2 prog=$3 n=$4 set=$5
shift 5
declare -A algos=(
  [barrier]="dissemination tree linear rdbl knomial knomial_tree shm_release shm"
  [bcast]="binomial scag_ring scag_rdbl linear chain pipeline knomial bintree pipe_bintree kchain twotree karytree balanced vchain kchain_opt pipe_knomial circulant shm"
  [reduce]="binomial rabenseifner linear pipeline inorder_bintree knomial twotree shm"
  [allreduce]="rdbl rabenseifner ring reduce_bcast knomial sra_knomial twotree shm"
  [reduce_scatter_block]="rhalving pairwise ring shm"
  [reduce_scatter]="rhalving pairwise ring"
  [scan]="rdbl linear pipeline"
  [exscan]="rdbl linear pipeline"
)
ops=() xflags=(-x UCOLL_WAIT -x UCOLL_TIMEOUT -x UCOLL_SEGMENT_SIZE) forced=""
export UCOLL_WAIT=${UCOLL_WAIT:-block} UCOLL_TIMEOUT=${UCOLL_TIMEOUT:-100}
# small segments, so that the pipelined algorithms cut even small vectors
export UCOLL_SEGMENT_SIZE=${UCOLL_SEGMENT_SIZE:-1k}
for v in UCX_TLS UCOLL_SHM UCOLL_SHM_SIZE; do
  if [[ -n ${!v:-} ]]; then xflags+=(-x "$v"); fi
done
if [[ -n ${COLL_EXPECT_SHM:-} ]]; then
  export UCOLL_LOG_LEVEL=debug
  xflags+=(-x UCOLL_LOG_LEVEL)
fi
if [[ $set == nb ]]; then
  ops=(-N)
elif [[ $set == shm || $set == shm-nb || $set == shm-kill ]]; then
  for op in barrier bcast reduce allreduce reduce_scatter_block; do
    export "UCOLL_${op^^}_ALGO=shm"
    xflags+=(-x "UCOLL_${op^^}_ALGO")
    forced+=" $op=shm"
  done
  case $set in
  shm) ops=(barrier bcast reduce allreduce reduce_scatter_block) ;;
  shm-nb) ops=(-N) ;;
  *) ops=(-K) ;;
  esac
else
  for op in barrier bcast reduce allreduce reduce_scatter_block reduce_scatter scan exscan; do
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
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
case $kind in
ucollrun)
  if [[ -n ${COLL_VALGRIND:-} ]]; then
    cmd=("$launcher" -n "$n" --timeout 400 valgrind -q --error-exitcode=9 --leak-check=full
         --errors-for-leak-kinds=definite --show-leak-kinds=definite
         --suppressions="$COLL_VALGRIND" "$prog" "$@" "${ops[@]}")
  else
    cmd=("$launcher" -n "$n" --timeout 150 "$prog" "$@" "${ops[@]}")
  fi ;;
mpirun) cmd=(timeout 170 "$launcher" --allow-run-as-root --oversubscribe -np "$n"
             "${xflags[@]}" "$prog" "$@" "${ops[@]}") ;;
*) echo "unknown launcher kind $kind"; exit 2 ;;
esac
echo "forced:$forced"
survivors=$n
if [[ $set == shm-kill ]]; then
  # the job has lost a rank: the launcher's status says nothing, the
  # survivors' reports do
  "${cmd[@]}" >"$out" 2>&1 || true
  survivors=$((n - 1))
elif ! "${cmd[@]}" >"$out" 2>&1; then
  cat "$out"; echo "FAIL: $kind -n $n set $set"; exit 1
fi
grep -v "^ucoll\[[0-9]*\] debug" "$out" || true
for ((r = 0; r < survivors; r++)); do
  if ! grep -q "^coll_mr: rank $r of $n: [0-9]* cases, 0 failed" "$out"; then
    echo "FAIL: rank $r of $n did not report success"; exit 1
  fi
  if [[ -n ${COLL_EXPECT_SHM:-} ]] &&
     ! grep -q "^ucoll\[$r\] debug .*comm 0: shared-memory collectives $COLL_EXPECT_SHM" "$out"; then
    grep "shared-memory" "$out" || true
    echo "FAIL: rank $r did not report shared-memory collectives $COLL_EXPECT_SHM"; exit 1
  fi
done
echo "ok: $kind -n $n set $set"
