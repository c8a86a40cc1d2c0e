#!/usr/bin/env bash
# Measured collective latency (ucoll_bench under ucollrun) next to the
# Hockney-model prediction of the same algorithm (ucoll_sim, a simulation
# with the runtime's default alpha/beta/gamma), in one run.
#   bench/coll_vs_model.sh [BUILD_DIR] [P] [OPS] [SIZES]
# e.g. bench/coll_vs_model.sh build 4 "bcast allreduce" "8 65536 4194304"
set -euo pipefail
build=${1:-build}
p=${2:-4}
ops=${3:-"bcast allreduce"}
sizes=${4:-"8 65536 4194304"}
run=("$build/launcher/ucollrun" -n "$p" --timeout 300)
bench="$build/bench/ucoll_bench"
sim="$build/bench/ucoll_sim"
# the model the runtime selects with: alpha grows when ranks outnumber cores
alpha=2e-6
if [ "$p" -gt "$(nproc)" ]; then alpha=42e-6; fi

algos_of() {  # the ids ucoll_info -a lists under "$1:"
    "$build/tools/ucoll_info" -a | awk -v op="$1:" '$0 == op {on = 1; next} /^[a-z_]+:$/ {on = 0} on {print $1}'
}

printf "# p=%d on %d cores, model alpha %s s; measured = avg us over ranks (ucoll_bench), model = ucoll_sim prediction\n" "$p" "$(nproc)" "$alpha"
printf "%-10s %-14s %10s %12s %12s %8s\n" op algo bytes measured_us model_us ratio
for op in $ops; do
    for size in $sizes; do
        default=$("${run[@]}" "$bench" "$op" --min-size "$size" --max-size "$size" 2>/dev/null |
                  awk '!/^#/ && NF >= 2 {print $2; exit}')
        printf "%-10s %-14s %10s %12s %12s %8s\n" "$op" "(default)" "$size" "$default" - -
        for algo in $(algos_of "$op"); do
            meas=$("${run[@]}" "$bench" "$op" --algo "$algo" --min-size "$size" --max-size "$size" \
                   2>/dev/null | awk '!/^#/ && NF >= 2 {print $2; exit}')
            model=$("$sim" -c "$op" -a "$algo" -m "$size" -p "$p" -A "$alpha" 2>/dev/null |
                    awk '!/^#/ && NF >= 7 {printf "%.2f", $7 * 1e6; exit}')
            ratio=-
            if [ -n "$meas" ] && [ -n "$model" ]; then
                ratio=$(awk -v a="$meas" -v b="$model" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
            fi
            printf "%-10s %-14s %10s %12s %12s %8s\n" "$op" "$algo" "$size" "${meas:--}" "${model:--}" "$ratio"
        done
    done
done
