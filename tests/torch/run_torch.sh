#!/usr/bin/env bash
# One torch backend test under a launcher:
#   run_torch.sh torchrun|ucollrun UCOLLRUN N SCRIPT [script args]
# torchrun is Debian's (/usr/bin/python3 -m torch.distributed.run) with a
# c10d rendezvous on a free port instead of --standalone's fixed 29400, so
# that it may run beside another torchrun, and with --redirects 1 --tee 1:
# torch 1.13's default "0" does not parse on Python 3.11 (iterating an
# IntFlag no longer yields its NONE member, so Std.from_str("0") is None).
# Under ucollrun the script's ucoll.torch.init_process_group() finds rank
# and size through PMIx and meets in a FileStore.
# Exit 77 (skip) when Debian's python3 has no torch or the build made no
# _ucoll_torch (configured without torch); any failing rank fails the test.
set -uo pipefail
kind=$1 ucollrun=$2 n=$3 script=$4
shift 4
PY=/usr/bin/python3
limit=${TORCH_TEST_LIMIT:-200}
if ! [[ -x $PY ]] || ! $PY -c 'import torch.distributed' 2>/dev/null; then
  echo "SKIP: $PY has no torch (Debian: python3-torch)"
  exit 77
fi
pkg=${PYTHONPATH%%:*}/ucoll
if ! compgen -G "$pkg/_ucoll_torch*.so" >/dev/null; then
  echo "SKIP: no $pkg/_ucoll_torch*.so (configured without torch)"
  exit 77
fi
export OMP_NUM_THREADS=1 UCOLL_WAIT=${UCOLL_WAIT:-block}
# the job's temporary files (the FileStore under ucollrun) in a directory of
# the test's own: a rank that ends with os._exit leaves its store behind
# (TORCH_TEST_KEEP_TMPDIR set: the caller's TMPDIR, which repeat_ns.sh reads)
[[ -n ${TORCH_TEST_KEEP_TMPDIR:-} ]] || {
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  export TMPDIR=$tmp
}
case $kind in
torchrun)
  port=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  timeout -k 5 "$limit" $PY -m torch.distributed.run --nnodes 1 --nproc_per_node "$n" \
    --rdzv_backend c10d --rdzv_endpoint "127.0.0.1:$port" --rdzv_id "test$$" \
    --redirects 1 --tee 1 "$script" "$@"
  ;;
ucollrun)
  "$ucollrun" -n "$n" --timeout "$limit" $PY "$script" "$@"
  ;;
*)
  echo "run_torch.sh: unknown launcher $kind" >&2
  exit 2
  ;;
esac
