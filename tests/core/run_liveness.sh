#!/usr/bin/env bash
# How a same-node peer's death is found (UCOLL_LIVENESS, lib/transport/ucx.h):
#   run_liveness.sh UCOLLRUN WORLD_PROGRAM
# 1. Over TCP alone, by default, each rank watches the other's process and
#    their endpoint has no UCX error handling (which would keep a
#    rendezvous on one TCP lane).
# 2. UCOLL_LIVENESS=ucx gives the endpoint UCX's peer error handling.
# 3. Set on one rank only, both ranks still choose UCX's error handling
#    (the endpoints of a pair must agree), and the job works.
# 4. UCOLL_LIVENESS=ucx over shared memory alone, which cannot serve UCX's
#    peer error handling: the job fails with a message that says so, and
#    does not hang.
# Each job prints the transport's debug log, which says how each endpoint
# was set up ("connected to rank R (net, pid watch)").
set -uo pipefail
ucollrun=$1 world=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
wrap=$(dirname "$(readlink -f "$0")")/rank_env.sh
fail=0
export UCOLL_WAIT=block UCOLL_TIMEOUT=30 UCOLL_LOG_LEVEL=debug

run() {   # name expect(ok|fail) -- job arguments
    local name=$1 expect=$2
    shift 3
    timeout 90 "$ucollrun" -n 2 --timeout 60 "$@" >"$tmp/out" 2>&1
    rc=$?
    if [ "$expect" = ok ] && [ $rc != 0 ]; then
        grep -v " debug " "$tmp/out"; echo "FAIL: $name: job status $rc"; fail=1; return 1
    fi
    if [ "$expect" = fail ] && { [ $rc = 0 ] || [ $rc = 124 ]; }; then
        grep -v " debug " "$tmp/out"; echo "FAIL: $name: job status $rc, expected a failure"
        fail=1; return 1
    fi
    return 0
}

has() {   # name pattern...: every pattern is in the job's output
    local name=$1 p
    shift
    for p in "$@"; do
        if ! grep -qF -- "$p" "$tmp/out"; then
            grep -E "connected to|liveness|error" "$tmp/out"; echo "FAIL: $name: no '$p'"; fail=1
            return 1
        fi
    done
    echo "ok: $name"
}

export UCX_TLS=tcp,self
run "tcp, default" ok -- "$world" 2 &&
    has "tcp, default: pid watch" "ucoll[0] debug" \
        "connected to rank 1 (net, pid watch)" "connected to rank 0 (net, pid watch)"

run "tcp, UCOLL_LIVENESS=ucx" ok -- -x UCOLL_LIVENESS=ucx "$world" 2 &&
    has "tcp, UCOLL_LIVENESS=ucx: UCX's peer error handling" \
        "connected to rank 1 (net, peer error handling: same node, no pid watch: UCOLL_LIVENESS=ucx)" \
        "connected to rank 0 (net, peer error handling: same node, no pid watch: UCOLL_LIVENESS=ucx)"

export RANK_ENV_1="UCOLL_LIVENESS=ucx"
run "tcp, UCOLL_LIVENESS=ucx on rank 1 only" ok -- -x RANK_ENV_1 "$wrap" "$world" 2 &&
    has "tcp, UCOLL_LIVENESS=ucx on rank 1 only: both ranks use UCX's peer error handling" \
        "connected to rank 1 (net, peer error handling: same node, no pid watch: it cannot be watched through its pid" \
        "connected to rank 0 (net, peer error handling: same node, no pid watch: UCOLL_LIVENESS=ucx)"
unset RANK_ENV_1

export UCX_TLS=sm,self
run "sm, UCOLL_LIVENESS=ucx" fail -- -x UCOLL_LIVENESS=ucx "$world" 2 &&
    has "sm, UCOLL_LIVENESS=ucx: fails, saying why" \
        "its liveness can only be watched by UCX's peer error handling (UCOLL_LIVENESS=ucx)"
exit $fail
