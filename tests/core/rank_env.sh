#!/usr/bin/env bash
# Runs a rank's program with settings of its own, for tests that need ranks
# to differ: RANK_ENV_<rank>="VAR=VALUE ..." (rank from PMIX_RANK) is
# exported, then the program is exec'ed:
#   LAUNCHER -x RANK_ENV_1 ... tests/core/rank_env.sh PROGRAM ARGS...
v=RANK_ENV_${PMIX_RANK:-0}
for kv in ${!v:-}; do export "$kv"; done
exec "$@"
