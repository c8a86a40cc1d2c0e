#!/usr/bin/env bash
# Started without any launcher: a singleton of size 1 by default, and a
# clear bootstrap error (no crash) when PMIx is required.
set -uo pipefail
prog=$1
env -u PMIX_NAMESPACE -u PMIX_RANK timeout 30 "$prog" 1 || { echo "FAIL: singleton run"; exit 1; }
out=$(UCOLL_BOOTSTRAP=pmix timeout 30 "$prog" 1 2>&1); rc=$?
echo "$out"
[ $rc -eq 2 ] || { echo "FAIL: expected exit 2 (init error), got $rc"; exit 1; }
echo "$out" | grep -q "ucollrun -n N" || { echo "FAIL: no hint how to start"; exit 1; }
echo "$out" | grep -q "bootstrap error" || { echo "FAIL: not UCOLL_ERR_BOOTSTRAP"; exit 1; }
echo "ok: no launcher"
