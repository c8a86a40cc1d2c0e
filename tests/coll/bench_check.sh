# Sourced by the tests that run ucoll_bench --check:
#   bench_check LABEL COMMAND...
# runs COMMAND, prints "ok: LABEL" when it exits 0 and ucoll_bench says its
# check passed, else "FAIL: LABEL (exit N)" with its last lines, and
# returns 1.
bench_check() {
    local label=$1 out rc
    shift
    out=$("$@" 2>&1)
    rc=$?
    if [ $rc -ne 0 ] || ! grep -q '^# check: passed' <<<"$out"; then
        echo "FAIL: $label (exit $rc)"
        tail -n 5 <<<"$out"
        return 1
    fi
    echo "ok: $label"
}
