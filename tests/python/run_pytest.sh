#!/usr/bin/env bash
# One pytest file of the Python package (python/ucoll):
#   run_pytest.sh PYTHON TESTFILE                 in this process
#   run_pytest.sh PYTHON TESTFILE UCOLLRUN N [SECONDS]
#       every rank of `ucollrun -n N --timeout SECONDS` (default 150) runs
#       the file; their tests meet in the same order
# PYTHONPATH comes from meson (<builddir>/python). Exits 77, meson's skip,
# when numpy, cffi or pytest is missing (torch only skips the torch tests).
set -uo pipefail
py=$1 file=$2 launcher=${3:-} n=${4:-1} limit=${5:-150}
if ! missing=$("$py" -c 'import numpy, cffi, pytest' 2>&1); then
    echo "SKIP: $py lacks numpy, cffi or pytest: ${missing##*$'\n'}"
    exit 77
fi
# no cache directory in the source tree (and ranks would race on it); no
# ini file of the project root: these options are the whole configuration
args=(-m pytest -q -x -p no:cacheprovider -c /dev/null --rootdir "$(dirname "$file")" "$file")
if [ -z "$launcher" ]; then
    exec "$py" "${args[@]}"
fi
exec "$launcher" -n "$n" --tag-output --timeout "$limit" "$py" "${args[@]}"
