#!/usr/bin/env bash
# repeat_ns.sh UCOLLRUN N SCRIPT: two ucollrun jobs with the same PMIx
# namespace, the first leaving its torch FileStore behind (see repeat_ns.py).
# Each job runs in a fresh PID namespace (unshare -p, as root), where the
# same commands give ucollrun the same process id, hence the same namespace,
# both times (checked); the jobs' temporary files go to a directory of the
# test's own, removed at the end. Skips (77) without torch, the extension or
# unshare's PID namespaces.
set -uo pipefail
ucollrun=$1 n=$2 script=$3
here=$(cd "$(dirname "$0")" && pwd)
if ! unshare -p -f --mount-proc true 2>/dev/null; then
  echo "SKIP: no PID namespaces here (unshare -p needs root)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TMPDIR=$tmp TORCH_TEST_KEEP_TMPDIR=1 TORCH_TEST_TIMEOUT=${TORCH_TEST_TIMEOUT:-30}
export TORCH_TEST_LIMIT=${TORCH_TEST_LIMIT:-90}
job() {
  # the same commands in a fresh PID namespace give the same process ids
  unshare -p -f --mount-proc sh -c '"$@"; exit $?' sh \
    "$here/run_torch.sh" ucollrun "$ucollrun" "$n" "$script" "$1"
}
ns_of() { sed -n 's/^\[0\] [a-z]*: namespace //p' "$1"; }
job leave | tee "$tmp/leave.out"
[[ ${PIPESTATUS[0]} -eq 0 ]] || { echo "FAIL: the first job failed"; exit 1; }
left=$(find "$tmp" -maxdepth 1 -name 'ucoll-torch-store-*' | wc -l)
echo "store files the first job left: $left"
if [[ $left -lt 1 ]]; then
  echo "FAIL: the first job left no store file; the test tests nothing"
  exit 1
fi
job reuse | tee "$tmp/reuse.out"
[[ ${PIPESTATUS[0]} -eq 0 ]] || { echo "FAIL: a job whose namespace repeats failed"; exit 1; }
a=$(ns_of "$tmp/leave.out") b=$(ns_of "$tmp/reuse.out")
if [[ -z $a || $a != "$b" ]]; then
  echo "FAIL: the namespaces differ ('$a', '$b'); the test tests nothing"
  exit 1
fi
echo "both jobs ran in namespace $a"
echo "PASS"
