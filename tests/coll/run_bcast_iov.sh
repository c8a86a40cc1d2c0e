#!/usr/bin/env bash
# The coalesced bcast test under a launcher:
#   run_bcast_iov.sh ucollrun|mpirun LAUNCHER PROGRAM N shm|packed [VAR=VALUE]
# The ranks log at debug level; with "shm" every rank must have sent lists
# straight through shared memory (its first calls may go packed while the
# setup runs), with "packed" none may have.
set -euo pipefail
kind=$1 launcher=$2 prog=$3 n=$4 way=$5 setting=${6:-}
export UCOLL_WAIT=block UCOLL_TIMEOUT=100 UCOLL_LOG_LEVEL=debug
xflags=(-x UCOLL_WAIT -x UCOLL_TIMEOUT -x UCOLL_LOG_LEVEL)
if [[ -n $setting ]]; then
  export "${setting?}"
  xflags+=(-x "${setting%%=*}")
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
case $kind in
ucollrun) cmd=("$launcher" -n "$n" --timeout 150 "$prog") ;;
mpirun) cmd=(timeout 170 "$launcher" --allow-run-as-root --oversubscribe -np "$n"
             "${xflags[@]}" "$prog") ;;
*) echo "unknown launcher kind $kind"; exit 2 ;;
esac
if ! "${cmd[@]}" >"$out" 2>&1; then
  grep -v "^ucoll\[[0-9]*\] debug" "$out" || true
  echo "FAIL: $kind -n $n $way $setting"; exit 1
fi
grep -v "^ucoll\[[0-9]*\] debug" "$out" || true
for ((r = 0; r < n; r++)); do
  if ! grep -q "^bcast_iov: rank $r ok" "$out"; then
    echo "FAIL: rank $r of $n did not report success"; exit 1
  fi
  straight=$(grep -c "^ucoll\[$r\] debug .*bcast_iov: .* straight through shared memory" "$out" || true)
  packed=$(grep -c "^ucoll\[$r\] debug .*bcast_iov: .* packed into a staging buffer" "$out" || true)
  echo "rank $r: $straight calls straight through shared memory, $packed packed"
  if [[ $way == shm && $straight -eq 0 ]] || [[ $way == packed && ($straight -ne 0 || $packed -eq 0) ]]; then
    echo "FAIL: rank $r did not take the $way way"; exit 1
  fi
done
echo "ok: $kind -n $n $way $setting"
