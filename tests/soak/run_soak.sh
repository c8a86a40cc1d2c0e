#!/usr/bin/env bash
# Soak test, outside the default suite (minutes): 10^6 random point-to-point
# and collective operations on 4 ranks under ucollrun, every result checked,
# resident memory sampled every 10^5 operations (tests/soak/soak.c).
#
# usage: tests/soak/run_soak.sh [OPERATIONS] [SEED] [TLS...]
#   defaults: 1000000 1 sm,self tcp,self      (from the project root, after a build)
# Exits non-zero if any run failed a check or its memory grew past the limit.
set -u
cd "$(dirname "$0")/../.."
OPS=${1:-1000000}
SEED=${2:-1}
shift $(( $# > 2 ? 2 : $# ))
TLS=("$@")
[ ${#TLS[@]} -gt 0 ] || TLS=(sm,self tcp,self)
BUILD=${BUILD:-build}
for f in "$BUILD/launcher/ucollrun" "$BUILD/tests/soak/soak"; do
    [ -x "$f" ] || { echo "run_soak.sh: no $f: build first (./scripts/build.sh)" >&2; exit 2; }
done
status=0
for tls in "${TLS[@]}"; do
    echo "# soak: $OPS operations, seed $SEED, 4 ranks, UCX_TLS=$tls"
    t0=$(date +%s)
    UCX_TLS=$tls timeout 3600 "$BUILD/launcher/ucollrun" -n 4 --timeout 3500 \
        "$BUILD/tests/soak/soak" "$OPS" "$SEED"
    rc=$?
    echo "# soak: UCX_TLS=$tls exit $rc after $(( $(date +%s) - t0 )) s"
    [ $rc -eq 0 ] || status=1
done
exit $status
