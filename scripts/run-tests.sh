#!/bin/sh
# Run every CUnit test binary given; print a total; fail if any failed.
build=$1; shift
# NCCL's own switches change what conveyor simulates, as they would change
# NCCL; the tests expect NCCL's defaults
. "$(dirname "$0")/nccl-env-clean.sh"
fail=0; n=0
for t in "$@"; do
    n=$((n + 1))
    echo "== $t"
    if ! "$t"; then
        echo "FAILED: $t" >&2
        fail=$((fail + 1))
    fi
done
echo "unit test programs: $((n - fail)) passed, $fail failed"
[ "$fail" = 0 ]
