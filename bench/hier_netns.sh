#!/usr/bin/env bash
# hier_netns.sh: two-level collectives against one-level ones and against
# Open MPI, across two "nodes" on this machine (network namespaces on a
# bridge, tests/multinode/netns.sh: TCP between the nodes, shared memory
# inside each), every job started by Open MPI's mpirun over the nodes.
#
# For each operation and run, alternating: ucoll's default selection,
# ucoll forced to 'hier', ucoll forced to each one-level row listed below,
# and Open MPI (pml ucx, mpi_yield_when_idle 1). OSU-style figures from
# ucoll_bench / mpi_bench (avg_us: the mean over ranks of each rank's
# average), median over the runs. Ranks wait by yielding (UCOLL_WAIT=yield):
# the nodes share this machine's cores.
#
# usage: bench/hier_netns.sh [-o "OPS"] [-n RANKS_PER_NODE] [-r RUNS]
#                            [--min-size B] [--max-size B] [-b BUILD] [--calibrate]
#   --calibrate  first fit the model of both paths on these nodes
#                (ucoll_tune --calibrate: "model:" inside a node, "model.net:"
#                between them) and run ucoll's variants with that file
#   defaults: -o "allreduce bcast reduce allgather barrier" -n 2 -r 3,
#   8 B to 1 MiB (4 KiB for allgather), build directory build.
# Needs root (namespaces); a measurement, not a test.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
OPS="allreduce bcast reduce allgather barrier" PPN=2 RUNS=3 MIN=8 MAX=1m BUILD=build CAL=0
while [ $# -gt 0 ]; do
    case $1 in
    -o) OPS=$2; shift ;;
    -n) PPN=$2; shift ;;
    -r) RUNS=$2; shift ;;
    --min-size) MIN=$2; shift ;;
    --max-size) MAX=$2; shift ;;
    -b) BUILD=$2; shift ;;
    --calibrate) CAL=1 ;;
    *) echo "usage: $0 [-o OPS] [-n PPN] [-r RUNS] [--min-size B] [--max-size B] [-b BUILD] [--calibrate]"; exit 2 ;;
    esac
    shift
done
BUILD=$(readlink -f "$root/$BUILD" 2>/dev/null || readlink -f "$BUILD")
mpi=$(command -v mpirun.openmpi || command -v mpirun) || { echo "needs Open MPI's mpirun"; exit 1; }
. "$root/tests/multinode/netns.sh"
make_nodes 2 || { echo "cannot build the namespaces"; exit 1; }
printf "n0 slots=%s\nn1 slots=%s\n" "$PPN" "$PPN" >"$tmp/hosts"
np=$((2 * PPN))
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 UCOLL_WAIT=yield

xtune=()
if [ "$CAL" = 1 ]; then
    export UCOLL_TUNE_FILE=$tmp/tune.txt
    on n0 timeout 300 "$mpi" --hostfile "$tmp/hosts" --mca plm_rsh_agent "$tmp/agent" \
        --mca oob_tcp_if_include "$net.0/24" --bind-to none -np $np -x UCOLL_WAIT \
        "$BUILD/tools/ucoll_tune" --calibrate -o "$UCOLL_TUNE_FILE" | grep -v "^written"
    xtune=(-x UCOLL_TUNE_FILE)
fi

declare -A FLAT=([allreduce]="rdbl rabenseifner ring" [bcast]="binomial scag_rdbl"
                 [reduce]="binomial rabenseifner pipeline" [allgather]="ring rdbl" [barrier]="dissemination")

# job VARIANT OP: rows "bytes avg_us" of one run
job() {
    local v=$1 op=$2 max=$MAX bin algo=()
    [ "$op" = allgather ] && max=4k
    case $v in
    openmpi) bin=$BUILD/bench/mpi_bench_ompi ;;
    default) bin=$BUILD/bench/ucoll_bench ;;
    *) bin=$BUILD/bench/ucoll_bench algo=(--algo "$v") ;;
    esac
    on n0 timeout 300 "$mpi" --hostfile "$tmp/hosts" --mca plm_rsh_agent "$tmp/agent" \
        --mca oob_tcp_if_include "$net.0/24" --bind-to none -np $np -x UCOLL_WAIT "${xtune[@]}" \
        --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any --mca btl self \
        --mca osc ^ucx --mca mpi_yield_when_idle 1 \
        "$bin" "$op" --min-size "$MIN" --max-size "$max" "${algo[@]}" 2>&1 |
        awk '$1 ~ /^[0-9]+$/ && NF >= 2 {print $1, $2}'
}

for op in $OPS; do
    variants="default hier ${FLAT[$op]} openmpi"
    : >"$tmp/$op.raw"
    for ((r = 1; r <= RUNS; r++)); do
        for v in $variants; do
            job "$v" "$op" | sed "s/^/$v /" >>"$tmp/$op.raw"
        done
    done
    echo "## $op: $PPN + $PPN ranks on 2 nodes, median avg_us of $RUNS runs"
    /usr/bin/python3 - "$tmp/$op.raw" $variants <<'PY'
import sys, statistics, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    v, b, t = line.split()
    rows[(v, int(b))].append(float(t))
vs = sys.argv[2:]
sizes = sorted({b for _, b in rows})
flat = [v for v in vs if v not in ("default", "hier", "openmpi")]
print("| bytes | " + " | ".join(vs) + " | hier/best flat | default/Open MPI |")
print("|" + "---|" * (len(vs) + 3))
def med(v, b):
    return statistics.median(rows[(v, b)]) if rows.get((v, b)) else None
for b in sizes:
    m = {v: med(v, b) for v in vs}
    cells = ["%.2f" % m[v] if m[v] is not None else "-" for v in vs]
    fl = [m[v] for v in flat if m[v] is not None]
    r1 = "%.2f" % (m["hier"] / min(fl)) if m["hier"] and fl else "-"
    r2 = "%.2f" % (m["default"] / m["openmpi"]) if m["default"] and m["openmpi"] else "-"
    print("| %d | %s | %s | %s |" % (b, " | ".join(cells), r1, r2))
PY
done
