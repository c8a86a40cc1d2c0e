#!/usr/bin/env bash
# The env bootstrap (RANK, WORLD_SIZE, MASTER_ADDR, as torchrun sets them;
# no PMIx): jobs that work, and every way it can go wrong ending in a clear
# error within UCOLL_BOOTSTRAP_TIMEOUT.
#   run_env_boot.sh WORLD_PROGRAM MULTI_CTX_PROGRAM
set -uo pipefail
world=$1 multi=$2
py=/usr/bin/python3
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT
unset PMIX_NAMESPACE PMIX_RANK PMIX_SERVER_URI4 PMIX_SERVER_URI41 PMIX_SERVER_URI3 \
      PMIX_SERVER_URI2 PMIX_SERVER_URI21 OMPI_COMM_WORLD_RANK
export MASTER_ADDR=127.0.0.1 UCOLL_BOOTSTRAP_TIMEOUT=${UCOLL_BOOTSTRAP_TIMEOUT:-30}
fail=0
# a free port below the ephemeral range (tests/free_port.py)
port() { /usr/bin/python3 "$(dirname "$0")/../free_port.py"; }

# start RANK=r WORLD_SIZE=size for each "r:size" argument; wait for all;
# outputs in $tmp/out.r (index of the argument), exit codes in $tmp/rc.i
job() {
    local prog=$1; shift
    local i=0 spec
    pids=()
    for spec in "$@"; do
        RANK=${spec%%:*} WORLD_SIZE=${spec##*:} timeout 60 "$prog" "${spec##*:}" \
            >"$tmp/out.$i" 2>&1 &
        pids+=($!)
        i=$((i + 1))
    done
    i=0
    for p in "${pids[@]}"; do
        wait "$p"; echo $? >"$tmp/rc.$i"; i=$((i + 1))
    done
    pids=()
}
expect_ok() { # what n
    local what=$1 n=$2 i
    for ((i = 0; i < n; i++)); do
        if [ "$(cat "$tmp/rc.$i")" != 0 ]; then
            cat "$tmp/out.$i"; echo "FAIL: $what: process $i exited $(cat "$tmp/rc.$i")"; fail=1
        fi
    done
    [ $fail = 0 ] && echo "ok: $what"
}
# expect_err WHAT INDEX PATTERN: process INDEX failed with a message matching PATTERN
expect_err() {
    local what=$1 i=$2 pat=$3
    if [ "$(cat "$tmp/rc.$i")" = 0 ] || [ "$(cat "$tmp/rc.$i")" = 124 ] ||
       ! grep -q "$pat" "$tmp/out.$i"; then
        cat "$tmp/out.$i"
        echo "FAIL: $what: process $i: rc $(cat "$tmp/rc.$i"), expected an error matching '$pat'"
        fail=1
    else
        echo "ok: $what (process $i: $(grep -m1 "$pat" "$tmp/out.$i"))"
    fi
}

export UCOLL_BOOTSTRAP_PORT=$(port)
job "$world" 0:4 1:4 2:4 3:4
expect_ok "world over env, 4 ranks" 4
for r in 0 1 2 3; do
    grep -q "^world: rank $r of 4, local $r of 4, reached 3 peers" "$tmp/out.$r" ||
        { cat "$tmp/out.$r"; echo "FAIL: rank $r did not report"; fail=1; }
done

# auto picks env when there is no PMIx and the three variables are set;
# two contexts in a row listen on the same port
UCOLL_BOOTSTRAP_PORT=$(port) UCOLL_BOOTSTRAP=auto job "$multi" 0:3 1:3 2:3
expect_ok "two env contexts and one OOB context per process, 3 ranks" 3

start=$(date +%s)
UCOLL_BOOTSTRAP_PORT=$(port) UCOLL_BOOTSTRAP_TIMEOUT=2 job "$world" 1:3 2:3
expect_err "rank 0 absent" 0 "cannot reach rank 0"
expect_err "rank 0 absent" 1 "cannot reach rank 0"
[ $(( $(date +%s) - start )) -le 10 ] || { echo "FAIL: rank 0 absent took too long"; fail=1; }

UCOLL_BOOTSTRAP_PORT=$(port) UCOLL_BOOTSTRAP_TIMEOUT=2 job "$world" 0:3 1:3
expect_err "rank 2 absent" 0 "missing ranks 2"
expect_err "rank 2 absent" 1 "not every rank arrived"

UCOLL_BOOTSTRAP_PORT=$(port) UCOLL_BOOTSTRAP_TIMEOUT=3 job "$world" 0:3 1:3 1:3
expect_err "duplicate rank" 0 "same RANK"
grep -q "refused this rank.*same RANK" "$tmp/out.1" "$tmp/out.2" ||
    { echo "FAIL: duplicate rank: no rank was told"; fail=1; }

UCOLL_BOOTSTRAP_PORT=$(port) UCOLL_BOOTSTRAP_TIMEOUT=3 job "$world" 0:3 1:3 2:4
expect_err "wrong size" 0 "disagree on WORLD_SIZE"

# a stranger connects to rank 0's port and talks nonsense before rank 1
# arrives: ignored, with a warning, and the job completes
p=$(port)
RANK=0 WORLD_SIZE=2 UCOLL_BOOTSTRAP_PORT=$p timeout 60 "$world" 2 >"$tmp/out.0" 2>&1 &
pids=($!)
$py -c "
import socket, time
for _ in range(100):
    try:
        s = socket.create_connection(('127.0.0.1', $p), timeout=1)
        break
    except OSError:
        time.sleep(0.1)
s.sendall(b'GET / HTTP/1.0\r\n\r\n' + bytes(range(64)))
s.close()" || { echo "FAIL: the stranger could not connect"; fail=1; }
sleep 0.3
RANK=1 WORLD_SIZE=2 UCOLL_BOOTSTRAP_PORT=$p timeout 60 "$world" 2 >"$tmp/out.1" 2>&1
echo $? >"$tmp/rc.1"
wait "${pids[0]}"; echo $? >"$tmp/rc.0"
pids=()
expect_ok "a stranger on the port is ignored" 2
grep -q "is not a ucoll rank: ignored" "$tmp/out.0" ||
    { cat "$tmp/out.0"; echo "FAIL: no warning about the stranger"; fail=1; }

# a rank that reaches a stranger's server instead of rank 0
p=$(port)
$py -c "
import socket
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(('127.0.0.1', $p)); l.listen(4); l.settimeout(20)
c, _ = l.accept(); c.recv(64); c.sendall(b'SSH-2.0-OpenSSH_9.2\r\n' + bytes(32)); c.close()" &
server=$!
sleep 0.5
UCOLL_BOOTSTRAP_PORT=$p UCOLL_BOOTSTRAP_TIMEOUT=5 job "$world" 1:2
expect_err "a stranger's server on the port" 0 "not ucoll's"
wait $server

# bad values of the variables
UCOLL_BOOTSTRAP=env RANK=x WORLD_SIZE=2 timeout 10 "$world" 2 >"$tmp/out.0" 2>&1; echo $? >"$tmp/rc.0"
expect_err "RANK not a number" 0 "RANK='x' is not an integer"
UCOLL_BOOTSTRAP=env RANK=2 WORLD_SIZE=2 timeout 10 "$world" 2 >"$tmp/out.0" 2>&1; echo $? >"$tmp/rc.0"
expect_err "RANK too large" 0 "RANK='2' is not an integer in 0..1"
UCOLL_BOOTSTRAP=env MASTER_ADDR=no.such.host.invalid RANK=1 WORLD_SIZE=2 UCOLL_BOOTSTRAP_TIMEOUT=2 \
    timeout 10 "$world" 2 >"$tmp/out.0" 2>&1; echo $? >"$tmp/rc.0"
expect_err "MASTER_ADDR that does not resolve" 0 "cannot resolve MASTER_ADDR"

[ $fail = 0 ] && echo "ok: env bootstrap"
exit $fail
