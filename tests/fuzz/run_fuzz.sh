#!/bin/sh
# Fuzz the wire: run the libFuzzer target tests/fuzz/fuzz_wire (the
# point-to-point engine's active-message handlers fed random and mutated
# packets) from the seed corpus.
#
#   run_fuzz.sh [-n RUNS] [-t SECONDS] [-j JOBS] [-b BUILD_DIR] [-c CORPUS_DIR] [-- FLAGS...]
#       Builds fuzz_wire with clang in BUILD_DIR (default build-fuzz at the
#       project root; configured with CC=clang when new, rebuilt if sources
#       changed), writes the seed corpus, and fuzzes for RUNS executions
#       (default 10^6; per job with -j) or SECONDS, whichever ends first.
#       New inputs go to CORPUS_DIR (kept; default a temporary directory),
#       findings to DIR/artifacts/ beside the binary. FLAGS go to libFuzzer.
#   run_fuzz.sh -x FUZZ_WIRE -g FUZZ_SEEDS [...]
#       The same with binaries already built (the suite's test in a clang
#       build).
#   run_fuzz.sh -r FUZZ_WIRE_REPLAY -g FUZZ_SEEDS
#       Replay the seed corpus through the harness built without libFuzzer.
#
# Exit status: 0 when nothing was found, 1 on a finding (the input that
# shows it is saved and named), 77 when clang or libFuzzer is missing.
set -u

src=$(cd "$(dirname "$0")/../.." && pwd)
runs=1000000
secs=0
jobs=1
build=
corpus=
exe=
seeds=
replay=

usage() {
    sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
}

while getopts n:t:j:b:c:x:g:r:h opt; do
    case $opt in
    n) runs=$OPTARG ;;
    t) secs=$OPTARG ;;
    j) jobs=$OPTARG ;;
    b) build=$OPTARG ;;
    c) corpus=$OPTARG ;;
    x) exe=$OPTARG ;;
    g) seeds=$OPTARG ;;
    r) replay=$OPTARG ;;
    *) usage ;;
    esac
done
shift $((OPTIND - 1))

work=$(mktemp -d "${TMPDIR:-/tmp}/run_fuzz.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM

if [ -n "$replay" ]; then
    mkdir -p "$work/seeds" && "$seeds" "$work/seeds" || exit 1
    "$replay" "$work/seeds"
    exit
fi

if [ -z "$exe" ]; then
    build=${build:-$src/build-fuzz}
    if [ ! -f "$build/build.ninja" ]; then
        if ! command -v clang >/dev/null 2>&1; then
            echo "run_fuzz: clang not found (Debian: apt-get install clang-14 libclang-rt-14-dev): skipped"
            exit 77
        fi
        printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
            'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return d && n; }' >"$work/probe.c"
        if ! clang -fsanitize=fuzzer "$work/probe.c" -o "$work/probe" >/dev/null 2>&1; then
            echo "run_fuzz: clang cannot link -fsanitize=fuzzer (Debian: apt-get install libclang-rt-14-dev): skipped"
            exit 77
        fi
        echo "run_fuzz: configuring $build with clang"
        if ! CC=clang meson setup "$build" "$src" >"$work/setup.log" 2>&1; then
            cat "$work/setup.log"
            exit 1
        fi
    fi
    if ! ninja -C "$build" tests/fuzz/fuzz_wire tests/fuzz/fuzz_seeds >"$work/build.log" 2>&1; then
        tail -n 30 "$work/build.log"
        echo "run_fuzz: cannot build tests/fuzz/fuzz_wire in $build (is it a clang build with libFuzzer?)"
        exit 1
    fi
    exe=$build/tests/fuzz/fuzz_wire
    seeds=$build/tests/fuzz/fuzz_seeds
fi

mkdir -p "$work/seeds" && "$seeds" "$work/seeds" || exit 1
if [ -z "$corpus" ]; then
    corpus=$work/corpus
fi
mkdir -p "$corpus" || exit 1
art=$(cd "$(dirname "$exe")" && pwd)/artifacts
mkdir -p "$art" || exit 1

set -- -runs="$runs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$art/" "$@"
if [ "$secs" -gt 0 ]; then
    set -- -max_total_time="$secs" "$@"
fi
if [ "$jobs" -gt 1 ]; then
    # one log per job (fuzz-N.log) beside the findings
    cd "$art" || exit 1
    set -- -jobs="$jobs" -workers="$jobs" "$@"
fi
"$exe" "$@" "$corpus" "$work/seeds"
rc=$?
if [ $rc -ne 0 ]; then
    echo "run_fuzz: fuzz_wire stopped with status $rc; findings in $art:"
    ls -t "$art" | head -n 5
    exit 1
fi
exit 0
