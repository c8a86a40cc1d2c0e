#!/bin/bash
# Tests of the ucollrun launcher, TAP-style: each check prints
# "ok - description" or "not ok - description"; the script exits non-zero
# when any check failed.
#
#   run_launcher_tests.sh UCOLLRUN PROG_INFO PROG_FAIL [MPIRUN]
#
# MPIRUN (Open MPI's mpirun) is optional: without it the mpirun checks are
# skipped. Every ucollrun run uses one private TMPDIR, which must be empty
# at the end: the launcher leaves no files behind, also when jobs fail.
set -euo pipefail

if [ $# -lt 3 ]; then
    echo "usage: $0 UCOLLRUN PROG_INFO PROG_FAIL [MPIRUN]" >&2
    exit 2
fi
UCOLLRUN=$1
PROG_INFO=$2
PROG_FAIL=$3
MPIRUN=${4:-}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ucollrun-tests.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
UCR_TMP=$WORK/ucr-tmp     # TMPDIR of every ucollrun run
MPI_TMP=$WORK/mpi-tmp     # TMPDIR of every mpirun run
mkdir -p "$UCR_TMP" "$MPI_TMP"
OUT=$WORK/out
ERR=$WORK/err

npass=0
nfail=0
start_time=$SECONDS

pass() { echo "ok - $1"; npass=$((npass + 1)); }
fail() {
    echo "not ok - $1"
    nfail=$((nfail + 1))
    if [ -n "${2:-}" ]; then printf '%s\n' "$2" | sed 's/^/#   /'; fi
}
# check DESCRIPTION COMMAND...: the command's success is the check's
check() {
    local desc=$1
    shift
    if "$@"; then pass "$desc"; else fail "$desc" "$(tail -n 20 "$OUT" "$ERR" 2>/dev/null || true)"; fi
}

# run [ENV...] -- ARGS...: run ucollrun under a 60 s guard; sets rc and dur.
run() {
    local t0=$SECONDS
    rc=0
    env TMPDIR="$UCR_TMP" timeout -s KILL 60 "$UCOLLRUN" "$@" >"$OUT" 2>"$ERR" || rc=$?
    dur=$((SECONDS - t0))
}

mpi_run() {
    rc=0
    env TMPDIR="$MPI_TMP" timeout -s KILL 60 "$MPIRUN" --allow-run-as-root --oversubscribe \
        "$@" >"$OUT" 2>"$ERR" || rc=$?
}

# expected prog_info lines for N ranks, sorted; univ is the job size
expect_info() {
    local n=$1 r
    for ((r = 0; r < n; r++)); do
        echo "prog_info rank=$r size=$n local_rank=$r local_size=$n nodeid=0 univ=$n appnum=0 peers_ok=$n"
    done | sort
}

# ---- usage and argument errors -------------------------------------------

run --help
check "--help prints usage and exits 0" \
    test $rc -eq 0 -a -s "$OUT" -a "$(grep -c 'usage: ucollrun' "$OUT")" -eq 1

run --no-such-option -n 1 true
check "an unknown option is a usage error" \
    test $rc -eq 2 -a "$(grep -c 'unrecognized option' "$ERR")" -eq 1

run -n 0 true
check "-n 0 is refused with a clear message" \
    test $rc -ne 0 -a "$(grep -c "ucollrun: -n '0': the number of ranks must be" "$ERR")" -eq 1

run true
check "a missing -n is refused" test $rc -ne 0 -a "$(grep -c 'number of ranks is missing' "$ERR")" -eq 1

run -n 2 ucollrun-no-such-program-xyz
check "a program that does not exist is reported before forking" \
    test $rc -eq 127 -a "$(grep -c 'ucollrun: ucollrun-no-such-program-xyz: command not found' "$ERR")" -eq 1

run -n 2 "$WORK"
check "a directory is not a program" test $rc -ne 0 -a "$(grep -c 'Permission denied' "$ERR")" -eq 1

run -n 2 --bind-to socket true
check "--bind-to with a bad value is a usage error" test $rc -eq 2

# ---- job information, put/fence/get --------------------------------------

for n in 1 2 3 4 8; do
    run -n "$n" "$PROG_INFO"
    if [ $rc -eq 0 ] && diff <(sort "$OUT") <(expect_info "$n") >/dev/null; then
        pass "prog_info under ucollrun, N=$n"
    else
        fail "prog_info under ucollrun, N=$n (rc=$rc)" "$(diff <(sort "$OUT") <(expect_info "$n"); tail -5 "$ERR")"
    fi
done

# no fence: gets of peers that have not committed yet wait in the server
run -n 4 "$PROG_INFO" --direct
check "direct modex (get before the peer commits, no fence) under ucollrun" \
    test $rc -eq 0 -a "$(grep -c 'peers_ok=4$' "$OUT")" -eq 4

if [ -n "$MPIRUN" ]; then
    mpi_run -np 4 "$PROG_INFO" --direct
    check "direct modex under mpirun" test $rc -eq 0 -a "$(grep -c 'peers_ok=4$' "$OUT")" -eq 4

    for n in 1 2 3 4 8; do
        mpi_run -np "$n" "$PROG_INFO"
        # mpirun reports its slot count as PMIX_UNIV_SIZE, not the job size
        if [ $rc -eq 0 ] && diff <(sed 's/ univ=[0-9]*/ univ=/' "$OUT" | sort) \
                                 <(expect_info "$n" | sed 's/ univ=[0-9]*/ univ=/') >/dev/null; then
            pass "prog_info under mpirun gives the same results, N=$n"
        else
            fail "prog_info under mpirun gives the same results, N=$n (rc=$rc)" "$(cat "$OUT"; tail -5 "$ERR")"
        fi
    done

    # Every key mpirun provides, ucollrun provides with the same type, and
    # with the same value where the value is not launcher-specific.
    mpi_run -np 3 "$PROG_INFO" --keys
    grep '^key ' "$OUT" | sort >"$WORK/keys.mpirun" || true
    run -n 3 "$PROG_INFO" --keys
    grep '^key ' "$OUT" | sort >"$WORK/keys.ucollrun" || true
    missing=""
    while IFS= read -r line; do
        name=$(echo "$line" | awk '{print $2}')
        value=${line#*= }
        case "$value" in "<absent>") continue ;; esac
        ours=$(grep "^key $name = " "$WORK/keys.ucollrun" || true)
        ours_value=${ours#*= }
        case "$name" in
        PMIX_JOBID | PMIX_UNIV_SIZE | PMIX_MAX_PROCS)
            # launcher-specific values: compare the type only
            if [ -z "$ours" ] || [ "$ours_value" = "<absent>" ] ||
                [ "$(echo "$value" | grep -o '([a-z0-9]*)$\|^"')" != \
                  "$(echo "$ours_value" | grep -o '([a-z0-9]*)$\|^"')" ]; then
                missing="$missing $name[$value vs $ours_value]"
            fi
            ;;
        *)
            if [ "$value" != "$ours_value" ]; then missing="$missing $name[$value vs $ours_value]"; fi
            ;;
        esac
    done <"$WORK/keys.mpirun"
    if [ -s "$WORK/keys.mpirun" ] && [ -z "$missing" ]; then
        pass "ucollrun provides every PMIx key mpirun provides, with matching types and values"
    else
        fail "ucollrun provides every PMIx key mpirun provides" "differences:$missing"
    fi
else
    echo "ok - # SKIP mpirun checks: no mpirun"
fi

# ---- failures -------------------------------------------------------------

run -n 4 "$PROG_FAIL" exit
check "a rank exiting with status 3 ends the job with status 3, named in one line" \
    test $rc -eq 3 -a $dur -lt 20 -a "$(grep -c '^ucollrun: rank 1 exited with status 3$' "$ERR")" -eq 1

run -n 4 "$PROG_FAIL" segv
check "a rank killed by SIGSEGV ends the job, named in one line" \
    test $rc -ne 0 -a $rc -ne 137 -a $dur -lt 20 -a \
    "$(grep -c '^ucollrun: rank 1 killed by signal SIGSEGV' "$ERR")" -eq 1

run -n 4 "$PROG_FAIL" abort 2
check "PMIx_Abort ends the job with the abort status and message" \
    test $rc -eq 5 -a $dur -lt 20 -a \
    "$(grep -c '^ucollrun: rank 2 called abort (status 5): prog_fail abort from rank 2$' "$ERR")" -eq 1

run -n 4 --timeout 2 "$PROG_FAIL" hang
check "--timeout ends a hung job with status 124" \
    test $rc -eq 124 -a $dur -lt 20 -a \
    "$(grep -c '^ucollrun: job timed out after 2 s; killing 4 ranks$' "$ERR")" -eq 1

run -n 3 "$PROG_FAIL" nofinalize 0
check "a rank leaving without PMIx_Finalize ends the job" \
    test $rc -ne 0 -a $rc -ne 137 -a $dur -lt 20 -a \
    "$(grep -c '^ucollrun: rank 0 exited with status 0 without calling PMIx_Finalize$' "$ERR")" -eq 1

run -n 1 "$PROG_FAIL" exit
check "a one-rank job fails the same way" \
    test $rc -eq 3 -a "$(grep -c '^ucollrun: rank 0 exited with status 3$' "$ERR")" -eq 1

run -n 4 "$PROG_FAIL" ok
check "prog_fail ok: no failure, exit 0" test $rc -eq 0 -a "$(grep -c 'done$' "$OUT")" -eq 4

# ---- --enable-recovery ------------------------------------------------------

# without the option, the ranks that would have outlived the victim are killed
run -n 4 "$PROG_FAIL" --sleep exit
check "without --enable-recovery a failed rank still ends the others" \
    test $rc -eq 3 -a $dur -lt 20 -a "$(grep -c 'done' "$OUT")" -eq 0 -a \
    "$(grep -c '^ucollrun: rank 1 exited with status 3$' "$ERR")" -eq 1

# the survivors outlive the victim by 1 s and finalize: the server is still
# there for them (finalize acknowledged), and shuts down cleanly at the end
# (only the failure's own line on stderr, no warning)
survivors="prog_fail rank=0 done finalize=SUCCESS|prog_fail rank=2 done finalize=SUCCESS|prog_fail rank=3 done finalize=SUCCESS|"
run -n 4 --enable-recovery "$PROG_FAIL" --sleep exit
check "--enable-recovery: a rank exiting 3 is reported, the others finish, exit status 3" \
    test $rc -eq 3 -a $dur -lt 20 -a "$(grep 'done' "$OUT" | sort | tr '\n' '|')" = "$survivors" -a \
    "$(grep -c '^ucollrun: rank 1 exited with status 3$' "$ERR")" -eq 1 -a \
    "$(grep -c '^ucollrun:' "$ERR")" -eq 1

run -n 4 --enable-recovery "$PROG_FAIL" --sleep kill
check "--enable-recovery: a rank killed by SIGKILL is reported, the others finish, exit status 137" \
    test $rc -eq 137 -a $dur -lt 20 -a "$(grep 'done' "$OUT" | sort | tr '\n' '|')" = "$survivors" -a \
    "$(grep -c '^ucollrun: rank 1 killed by signal SIGKILL$' "$ERR")" -eq 1 -a \
    "$(grep -c '^ucollrun:' "$ERR")" -eq 1

run -n 4 --enable-recovery "$PROG_FAIL" --sleep nofinalize 0
check "--enable-recovery: an exit 0 without PMIx_Finalize is a failure (status 1) that ends only that rank" \
    test $rc -eq 1 -a $dur -lt 20 -a "$(grep -c 'done finalize=SUCCESS$' "$OUT")" -eq 3 -a \
    "$(grep -c '^ucollrun: rank 0 exited with status 0 without calling PMIx_Finalize$' "$ERR")" -eq 1 -a \
    "$(grep -c '^ucollrun:' "$ERR")" -eq 1

# the others wait in a fence the victim never joins: PMIx ends it in an
# error for them once the victim's connection is gone
run -n 4 --enable-recovery "$PROG_FAIL" exit
check "--enable-recovery: a fence the failed rank never joined ends, the others finish" \
    test $rc -eq 3 -a $dur -lt 20 -a "$(grep -c 'done$' "$OUT")" -eq 3 -a \
    "$(grep -c '^ucollrun:' "$ERR")" -eq 1

run -n 4 --enable-recovery "$PROG_FAIL" --sleep ok
check "--enable-recovery without a failure: exit 0" \
    test $rc -eq 0 -a "$(grep -c 'done finalize=SUCCESS$' "$OUT")" -eq 4 -a ! -s "$ERR"

run -n 4 --enable-recovery "$PROG_FAIL" abort 2
check "--enable-recovery: PMIx_Abort still ends the whole job" \
    test $rc -eq 5 -a $dur -lt 20 -a "$(grep -c 'done' "$OUT")" -eq 0 -a \
    "$(grep -c '^ucollrun: rank 2 called abort (status 5): prog_fail abort from rank 2$' "$ERR")" -eq 1

run -n 4 --enable-recovery --timeout 2 "$PROG_FAIL" hang
check "--enable-recovery: --timeout still kills a hung job with status 124" \
    test $rc -eq 124 -a $dur -lt 20 -a \
    "$(grep -c '^ucollrun: job timed out after 2 s; killing 4 ranks$' "$ERR")" -eq 1

# rank 1 fails, rank 2 hangs: the timeout kills rank 2, the status stays the
# first failure's
run -n 4 --enable-recovery --timeout 2 \
    sh -c 'case $PMIX_RANK in 1) exit 3 ;; 2) exec sleep 30 ;; esac; echo "rank $PMIX_RANK done"'
check "--enable-recovery: a survivor hanging after a failure is killed at the timeout, status of the first failure" \
    test $rc -eq 3 -a $dur -lt 20 -a "$(grep -c 'done$' "$OUT")" -eq 2 -a \
    "$(grep -c '^ucollrun: rank 1 exited with status 3$' "$ERR")" -eq 1 -a \
    "$(grep -c '^ucollrun: job timed out after 2 s; killing 1 ranks$' "$ERR")" -eq 1

# SIGINT and SIGTERM to the launcher reach the ranks. A background job of a
# script starts with SIGINT ignored; env --default-signal undoes that.
for sig in INT TERM; do
    rm -f "$OUT" "$ERR"
    env TMPDIR="$UCR_TMP" timeout -s KILL 60 env --default-signal=INT,TERM \
        "$UCOLLRUN" -n 4 "$PROG_FAIL" hang >"$OUT" 2>"$ERR" &
    pid=$!
    for _ in $(seq 200); do
        grep -q 'mode=hang' "$OUT" 2>/dev/null && break
        sleep 0.05
    done
    sleep 0.2
    # timeout(1) runs env, which execs ucollrun: the launcher is timeout's child
    kill -s "$sig" "$(pgrep -P "$pid" -f "$UCOLLRUN")" 2>/dev/null || true
    rc=0
    wait "$pid" || rc=$?
    want=$((128 + $(kill -l "$sig")))
    check "SIG$sig to the launcher is forwarded to the ranks and ends the job" \
        test $rc -eq $want -a "$(grep -c "^ucollrun: received SIG$sig; forwarding it to 4 ranks$" "$ERR")" -eq 1
done

# ---- output ---------------------------------------------------------------

run -n 3 --tag-output sh -c 'echo "hello from $PMIX_RANK"; echo "oops from $PMIX_RANK" >&2'
check "--tag-output prefixes stdout lines with [rank]" \
    test $rc -eq 0 -a "$(sort "$OUT" | tr '\n' '|')" = "[0] hello from 0|[1] hello from 1|[2] hello from 2|"
check "--tag-output prefixes stderr lines with [rank]" \
    test "$(sort "$ERR" | tr '\n' '|')" = "[0] oops from 0|[1] oops from 1|[2] oops from 2|"

# many ranks write many lines in pieces at the same time: no line is torn
run -n 4 sh -c 'i=0; while [ $i -lt 300 ]; do printf "rank%s-line%s-" $PMIX_RANK $i; printf "end\n"; i=$((i+1)); done'
check "lines written in pieces are never interleaved" \
    test $rc -eq 0 -a "$(grep -c '^rank[0-3]-line[0-9]*-end$' "$OUT")" -eq 1200 -a "$(wc -l <"$OUT")" -eq 1200

run -n 2 sh -c 'printf "no newline at the end"'
check "a last line without a newline is kept" \
    test $rc -eq 0 -a "$(grep -c '^no newline at the end$' "$OUT")" -eq 2

# the launcher's reader goes away: the ranks get SIGPIPE, nothing hangs
(
    rc=0
    env TMPDIR="$UCR_TMP" timeout -s KILL 60 "$UCOLLRUN" -n 2 yes 2>"$ERR" || rc=$?
    echo $rc >"$WORK/status"
) | head -n 1 >"$OUT" || true
check "output into a closed pipe ends the job instead of hanging" \
    test "$(cat "$WORK/status")" -ne 137 -a "$(cat "$OUT")" = y

export UCR_TEST_FORWARDED=from-parent
run -n 2 -x UCR_TEST_SET=set-by-x -x UCR_TEST_FORWARDED sh -c 'echo "$UCR_TEST_SET $UCR_TEST_FORWARDED"'
check "-x VAR=VALUE sets a variable, -x VAR passes the current value" \
    test $rc -eq 0 -a "$(grep -c '^set-by-x from-parent$' "$OUT")" -eq 2
unset UCR_TEST_FORWARDED

run -n 2 sh -c 'exit 0'
check "a program that does not use PMIx runs fine" test $rc -eq 0

# ---- binding ----------------------------------------------------------------

run -n 4 --bind-to core --report-bindings --tag-output sh -c 'grep Cpus_allowed_list: /proc/self/status'
bind_ok=$([ $rc -eq 0 ] && echo yes || echo no)
for r in 0 1 2 3; do
    reported=$(sed -n "s/^ucollrun: rank $r bound to [A-Za-z]* [0-9]* (cpus \(.*\))$/\1/p" "$ERR")
    actual=$(sed -n "s/^\[$r\] Cpus_allowed_list:[[:space:]]*//p" "$OUT")
    if [ -z "$reported" ] || [ "$reported" != "$actual" ]; then bind_ok=no; fi
done
check "--bind-to core --report-bindings reports each rank's binding, and it holds" test $bind_ok = yes

run -n 2 --report-bindings true
check "--report-bindings without binding says so" \
    test $rc -eq 0 -a "$(grep -c '^ucollrun: rank [01] not bound$' "$ERR")" -eq 2

# ---- scale and repetition ---------------------------------------------------

run -n 64 sh -c 'echo "rank=$PMIX_RANK"'
check "N=64 with a trivial program" \
    test $rc -eq 0 -a "$(sort -u "$OUT" | grep -c '^rank=[0-9]*$')" -eq 64

run -n 16 "$PROG_INFO"
check "prog_info under ucollrun, N=16" test $rc -eq 0 -a "$(grep -c 'peers_ok=16$' "$OUT")" -eq 16

t0=$SECONDS
all_ok=yes
for i in $(seq 20); do
    run -n 4 "$PROG_INFO"
    if [ $rc -ne 0 ] || [ "$(grep -c 'peers_ok=4$' "$OUT")" -ne 4 ]; then all_ok=no; fi
done
check "20 jobs in a row succeed ($((SECONDS - t0)) s)" test $all_ok = yes

leftover=$(find "$UCR_TMP" -mindepth 1 | head -5)
check "no files left in TMPDIR after all the jobs above" test -z "$leftover"
# every launcher and rank above ran with TMPDIR=$UCR_TMP in its environment
procs=$(grep -slzx "TMPDIR=$UCR_TMP" /proc/[0-9]*/environ 2>/dev/null || true)
if [ -z "$procs" ]; then
    pass "no processes left over"
else
    fail "no processes left over" "$(for f in $procs; do p=${f#/proc/}; ps -o pid=,args= -p "${p%/environ}"; done)"
fi

echo "# $npass passed, $nfail failed, $((SECONDS - start_time)) s"
[ $nfail -eq 0 ]
