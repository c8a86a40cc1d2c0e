#!/usr/bin/env bash
# A 2-rank job of PROGRAM under valgrind memcheck: no invalid access and no
# definite leak of ours (the libraries' own are suppressed by valgrind.supp).
#   run_valgrind.sh UCOLLRUN SUPP PROGRAM [ARGS]
set -uo pipefail
launcher=$1 supp=$2; shift 2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$launcher" -n 2 --timeout 240 valgrind --leak-check=full --errors-for-leak-kinds=definite \
    --show-leak-kinds=definite --error-exitcode=9 --suppressions="$supp" "$@" >"$log" 2>&1
rc=$?
grep -E "Invalid|definitely lost|ERROR SUMMARY|ucollrun:" "$log"
if [ $rc -ne 0 ]; then
    cat "$log"; echo "FAIL: valgrind run exited $rc"; exit 1
fi
echo "ok: clean under valgrind"
