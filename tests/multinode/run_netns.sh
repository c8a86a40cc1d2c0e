#!/usr/bin/env bash
# Several nodes on one machine: network namespaces joined by veth pairs to
# a bridge (in a namespace of its own, so nothing touches the host's
# network), each "node" with its own host name (a UTS namespace) and its
# own /etc/hosts (ip netns exec mounts /etc/netns/NAME/hosts). Jobs then
# run across the nodes under an existing launcher with a hostfile, whose
# rsh/ssh agent enters the node's namespaces instead of logging in:
#   Open MPI's mpirun  --mca plm_rsh_agent AGENT
#   PRRTE's prterun    --prtemca plm_ssh_agent AGENT   (where installed)
# and with the env bootstrap (RANK, WORLD_SIZE, MASTER_ADDR), one process
# started in each node's namespaces. UCX sees separate hosts: TCP between
# nodes, shared memory inside each.
#   run_netns.sh NODES_PROGRAM [RUN_COLL COLL_MR RUN_P2P P2P_TEST [RUN_KILL KILL]]
# With the next four, also the collective suite (tests/coll/run_coll.sh:
# every algorithm forced, set by set, and the nonblocking test with the
# model's choices) and the point-to-point test (tests/p2p/run_p2p.sh), at
# 2 nodes x 2 ranks and 4 nodes x 1 rank, through an mpirun that starts
# its job across the nodes; with the last two, a rank dying in the middle
# of an allreduce, a bcast and an allgather (tests/coll/run_kill.sh), the
# two-level rows and flat ones, at 2 nodes x 2 ranks: the failure must
# reach the other node's ranks through the leaders.
# Needs root and network namespaces: skipped (exit 77) with a message
# otherwise. Everything made here is removed at the end, also on failure.
set -uo pipefail
prog=$(readlink -f "$1")
suite=()
[ $# -ge 5 ] && suite=("$2" "$(readlink -f "$3")" "$4" "$(readlink -f "$5")")
kill_suite=()
[ $# -ge 7 ] && kill_suite=("$6" "$(readlink -f "$7")")
. "$(dirname "$0")/netns.sh"

make_nodes 4 || { echo "FAIL: cannot build the namespaces"; exit 1; }
ip netns exec "$id-n0" /usr/bin/env python3 - "$net.3" 2>/dev/null <<'EOS' ||
import socket, sys
s = socket.socket(); s.settimeout(3)
try:
    s.connect((sys.argv[1], 9))
except ConnectionRefusedError:
    sys.exit(0)
sys.exit(1)
EOS
    { echo "FAIL: n0 cannot reach n2 over the bridge"; exit 1; }
echo "nodes n0 n1 n2 n3 at $net.1-4 (namespaces $id-*)"

export UCOLL_WAIT=block UCOLL_TIMEOUT=120 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# check OUT NRANKS NNODES WHAT
check() {
    local out=$1 n=$2 what=$3
    if [ "$(grep -c ': ok$' "$out")" != "$n" ] || grep -q FAIL "$out"; then
        cat "$out"; echo "FAIL: $what"; fail=1
    else
        grep "^nodes: rank 0 ->" "$out"
        echo "ok: $what"
    fi
}

mpi=$(command -v mpirun.openmpi || command -v mpirun)
if [ -n "$mpi" ]; then
    # 2 + 2 + 1 ranks, and 3 + 1 (one node oversubscribed on this machine's
    # 2 cores, the other not: selection must still agree)
    for layout in "n0:2 n1:2 n2:1" "n0:3 n1:1"; do
        : >"$tmp/hosts"
        np=0
        for h in $layout; do echo "${h%:*} slots=${h#*:}" >>"$tmp/hosts"; np=$((np + ${h#*:})); done
        nn=$(echo $layout | wc -w)
        on n0 timeout 200 "$mpi" --hostfile "$tmp/hosts" --mca plm_rsh_agent "$tmp/agent" \
            --mca oob_tcp_if_include "$net.0/24" --bind-to none -np $np -x UCOLL_WAIT -x UCOLL_TIMEOUT \
            "$prog" "$nn" 2 >"$tmp/out" 2>&1
        check "$tmp/out" $np "mpirun over $nn nodes ($layout)"
    done
    # the two-level rows forced (2 + 2 ranks): the world's collectives run
    # in shared memory inside each node and over TCP between the leaders
    printf "n0 slots=2\nn1 slots=2\n" >"$tmp/hosts"
    on n0 env UCOLL_BARRIER_ALGO=hier UCOLL_BCAST_ALGO=hier UCOLL_REDUCE_ALGO=hier \
        UCOLL_ALLREDUCE_ALGO=hier UCOLL_ALLGATHER_ALGO=hier UCOLL_LOG_LEVEL=debug \
        timeout 200 "$mpi" --hostfile "$tmp/hosts" --mca plm_rsh_agent "$tmp/agent" \
        --mca oob_tcp_if_include "$net.0/24" --bind-to none -np 4 -x UCOLL_WAIT -x UCOLL_TIMEOUT \
        -x UCOLL_BARRIER_ALGO -x UCOLL_BCAST_ALGO -x UCOLL_REDUCE_ALGO -x UCOLL_ALLREDUCE_ALGO \
        -x UCOLL_ALLGATHER_ALGO -x UCOLL_LOG_LEVEL "$prog" 2 2 >"$tmp/out" 2>&1
    if ! grep -q "two levels, 2 nodes" "$tmp/out" || ! grep -q "allreduce: hier (forced)" "$tmp/out"; then
        grep -v " debug " "$tmp/out" | tail -20; echo "FAIL: two levels did not run across nodes"; fail=1
    else
        check "$tmp/out" 4 "mpirun over 2 nodes, two-level rows forced"
    fi
else
    echo "no Open MPI mpirun: its runs skipped"
fi

# the collective and point-to-point suites across nodes: run_coll.sh and
# run_p2p.sh take "mpirun LAUNCHER"; this launcher starts mpirun on n0
# with the hostfile and the agent, so their jobs span the nodes
if [ -n "$mpi" ] && [ ${#suite[@]} = 4 ]; then
    cat >"$tmp/mpirun-nodes" <<EOS
#!/bin/bash
exec "$tmp/agent" n0 "\$(printf '%q ' "$mpi" --hostfile "$tmp/hosts" --mca plm_rsh_agent "$tmp/agent" --mca oob_tcp_if_include "$net.0/24" --bind-to none "\$@")"
EOS
    chmod +x "$tmp/mpirun-nodes"
    for layout in "n0:2 n1:2" "n0:1 n1:1 n2:1 n3:1"; do
        : >"$tmp/hosts"
        for h in $layout; do echo "${h%:*} slots=${h#*:}" >>"$tmp/hosts"; done
        ok=0 bad=0
        for set in $(seq 0 17) nb; do
            if "${suite[0]}" mpirun "$tmp/mpirun-nodes" "${suite[1]}" 4 "$set" >"$tmp/coll" 2>&1; then
                ok=$((ok + 1))
            else
                tail -20 "$tmp/coll"; echo "FAIL: collective set $set over $layout"; fail=1; bad=$((bad + 1))
            fi
        done
        echo "ok: $ok collective sets over $layout ($bad failed)"
        if "${suite[2]}" mpirun "$tmp/mpirun-nodes" "${suite[3]}" 4 tcp,sm,self >"$tmp/p2p" 2>&1; then
            echo "ok: point to point over $layout"
        else
            tail -20 "$tmp/p2p"; echo "FAIL: point to point over $layout"; fail=1
        fi
    done
fi
if [ -n "$mpi" ] && [ ${#kill_suite[@]} = 2 ]; then
    printf "n0 slots=2\nn1 slots=2\n" >"$tmp/hosts"
    for case in "allreduce hier ring rdbl" "bcast hier binomial chain" "allgather hier ring bruck"; do
        read -ra c <<<"$case"
        # the victim is rank 1, not a leader, on mpirun's own node: Open
        # MPI's orted on another node keeps a job whose rank died there
        # from ending under --enable-recovery; its news must reach n1's
        # ranks (leader rank 2) all the same
        if KILL_VICTIM=1 "${kill_suite[0]}" mpirun "$tmp/mpirun-nodes" "${kill_suite[1]}" 4 "${c[@]}" \
            >"$tmp/kill" 2>&1; then
            grep "^ok:" "$tmp/kill"
        else
            tail -30 "$tmp/kill"; echo "FAIL: a rank dying in ${c[0]} over 2 nodes"; fail=1
        fi
    done
fi

if command -v prterun >/dev/null; then
    printf "n0 slots=2\nn1 slots=2\n" >"$tmp/hosts"
    on n0 timeout 200 prterun --hostfile "$tmp/hosts" --prtemca plm_ssh_agent "$tmp/agent" \
        --prtemca oob_tcp_if_include "$net.0/24" -n 4 -x UCOLL_WAIT -x UCOLL_TIMEOUT \
        "$prog" 2 2 >"$tmp/out" 2>&1
    check "$tmp/out" 4 "prterun over 2 nodes"
else
    echo "no prterun (PRRTE) installed: its run skipped"
fi

# the env bootstrap over the bridge: rank 0 on n0, the others elsewhere
pids=()
i=0
for h in n0 n1 n2 n1; do
    on "$h" env RANK=$i WORLD_SIZE=4 MASTER_ADDR=n0 UCOLL_BOOTSTRAP_PORT=29611 \
        UCOLL_BOOTSTRAP_TIMEOUT=60 timeout 200 "$prog" 3 2 >"$tmp/env.$i" 2>&1 &
    pids+=($!)
    i=$((i + 1))
done
for p in "${pids[@]}"; do wait "$p"; done
cat "$tmp"/env.* >"$tmp/out"
check "$tmp/out" 4 "env bootstrap over 3 nodes (MASTER_ADDR=n0)"

exit $fail
