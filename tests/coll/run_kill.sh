#!/usr/bin/env bash
# A rank dies in the middle of a collective (tests/coll/kill.c), once per
# algorithm of the op, each in a job of its own:
#   run_kill.sh ucollrun|mpirun LAUNCHER PROGRAM N OP [ALGO...]
# Without ALGOs every algorithm of OP runs; KILL_VICTIM=R picks the rank
# that dies (tests/coll/kill.c). The victim is absent from the
# call or dies inside it, alternately by algorithm and by N, so that each
# algorithm meets both over the sizes the suite runs. The job runs with
# --enable-recovery (ucollrun's, or Open MPI's mpirun's): the launcher lets
# the survivors finish, and they must finalize.
# No UCOLL_TIMEOUT: the failure itself must end the call. Every survivor
# must print "kill: rank R ok"; the job's own status is that of the dead
# rank and says nothing.
set -uo pipefail
kind=$1 launcher=$2 prog=$3 n=$4 op=$5
shift 5
declare -A all=(
  [bcast]="binomial scag_ring scag_rdbl linear chain pipeline knomial bintree pipe_bintree kchain twotree karytree balanced vchain kchain_opt pipe_knomial circulant shm"
  [allreduce]="rdbl rabenseifner ring reduce_bcast knomial sra_knomial twotree shm"
  [allgather]="ring rdbl bruck neighbor gather_bcast shm"
)
if (($# > 0)); then algos=("$@"); else read -ra algos <<<"${all[$op]}"; fi
var="UCOLL_${op^^}_ALGO"
export UCOLL_WAIT=block UCOLL_SEGMENT_SIZE=${UCOLL_SEGMENT_SIZE:-4k}
unset UCOLL_TIMEOUT
xflags=(-x UCOLL_WAIT -x UCOLL_SEGMENT_SIZE)
[[ -n ${UCX_TLS:-} ]] && xflags+=(-x UCX_TLS)
[[ -n ${KILL_VICTIM:-} ]] && xflags+=(-x KILL_VICTIM)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
bad=0 k=0
for algo in "${algos[@]}"; do
  if (((k + n) % 2)); then mode=mid; else mode=absent; fi
  k=$((k + 1))
  export "$var=$algo"
  case $kind in
  ucollrun)
    cmd=("$launcher" -n "$n" --enable-recovery --timeout 90 "${xflags[@]}" -x "$var"
         "$prog" "$op" "$mode") ;;
  mpirun)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    cmd=(timeout -k 5 90 "$launcher" --allow-run-as-root --oversubscribe --enable-recovery
         -np "$n" "${xflags[@]}" -x "$var" "$prog" "$op" "$mode") ;;
  *) echo "unknown launcher kind $kind"; exit 2 ;;
  esac
  start=$(date +%s.%N)
  "${cmd[@]}" >"$out" 2>&1
  rc=$?
  secs=$(echo "$(date +%s.%N) - $start" | bc)
  victim=$((n - 1))
  [[ $op == bcast ]] && victim=1
  [[ -n ${KILL_VICTIM:-} ]] && victim=$KILL_VICTIM
  miss=()
  for ((r = 0; r < n; r++)); do
    ((r == victim)) && continue
    grep -q "^kill: rank $r ok" "$out" || miss+=("$r")
  done
  if ((${#miss[@]})); then
    cat "$out"
    echo "FAIL: $kind -n $n $op $algo $mode (job status $rc): ranks ${miss[*]} did not report ok"
    bad=1
  else
    grep "^kill: rank [0-9]*:" "$out" | sed "s/^/  $algo: /"
    printf 'ok: %s -n %d %s %s %s in %.1f s\n' "$kind" "$n" "$op" "$algo" "$mode" "$secs"
  fi
done
exit $bad
