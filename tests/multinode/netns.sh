# netns.sh: several "nodes" on one machine, sourced by
# tests/multinode/run_netns.sh and bench/hier_netns.sh. Network namespaces
# joined by veth pairs to a bridge (in a namespace of its own, so nothing
# touches the host's network), each node with its own host name (a UTS
# namespace) and its own /etc/hosts (ip netns exec mounts
# /etc/netns/NAME/hosts). Defines:
#   make_nodes N        nodes n0..n(N-1) at $net.1 .. $net.N
#   on NODE COMMAND...  run in NODE's namespaces
#   $tmp/agent          "AGENT HOST COMMAND", the rsh/ssh agent for
#                       mpirun --mca plm_rsh_agent / prterun --prtemca plm_ssh_agent
# Exits 77 (skip) without root or namespaces; removes everything it made
# when the sourcing script exits, also on failure.
set -uo pipefail
id=ucm$$
net=10.$((100 + RANDOM % 100)).$((RANDOM % 250)).0
net=${net%.0}
tmp=$(mktemp -d)
nodes=()
fail=0

skip() { echo "SKIP: $*"; rm -rf "$tmp"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root for network namespaces"
command -v ip >/dev/null || skip "no ip command (Debian package iproute2)"
command -v unshare >/dev/null || skip "no unshare (util-linux)"
ip netns add "$id-probe" 2>/dev/null || skip "cannot create network namespaces here"
ip netns del "$id-probe"

cleanup() {
    local ns
    for ns in "${nodes[@]}" hub; do
        ip netns pids "$id-$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
        ip netns del "$id-$ns" 2>/dev/null
        rm -rf "/etc/netns/$id-$ns"
    done
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# make_nodes N: nodes n0..n(N-1) at $net.1 .. $net.N on one bridge
make_nodes() {
    local n=$1 i
    ip netns add "$id-hub" || return 1
    ip -n "$id-hub" link set lo up
    ip -n "$id-hub" link add br0 type bridge && ip -n "$id-hub" link set br0 up || return 1
    for ((i = 0; i < n; i++)); do
        nodes+=("n$i")
        ip netns add "$id-n$i" || return 1
        ip link add "v$i" netns "$id-n$i" type veth peer name "h$i" netns "$id-hub" || return 1
        ip -n "$id-hub" link set "h$i" master br0 up
        ip -n "$id-n$i" addr add "$net.$((i + 1))/24" dev "v$i"
        ip -n "$id-n$i" link set "v$i" up
        ip -n "$id-n$i" link set lo up
    done
    for ((i = 0; i < n; i++)); do
        mkdir -p "/etc/netns/$id-n$i"
        {
            echo "127.0.0.1 localhost"
            for ((j = 0; j < n; j++)); do echo "$net.$((j + 1)) n$j"; done
        } >"/etc/netns/$id-n$i/hosts"
    done
}

# The agent: "AGENT HOST COMMAND..." runs COMMAND (one shell string, as ssh
# takes it) in HOST's network namespace under HOST's name.
cat >"$tmp/agent" <<EOS
#!/bin/sh
host=\$1; shift
exec ip netns exec $id-\$host unshare -u /bin/sh -c 'hostname "\$0"; exec /bin/sh -c "\$1"' "\$host" "\$*"
EOS
chmod +x "$tmp/agent"

# on NODE COMMAND...: run in NODE's namespaces
on() { local h=$1; shift; "$tmp/agent" "$h" "$(printf '%q ' "$@")"; }

