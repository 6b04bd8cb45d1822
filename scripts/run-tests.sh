#!/bin/sh
# Run every CUnit test binary given; print a total; fail if any failed.
build=$1; shift
# NCCL's own switches change what conveyor simulates, as they would change
# NCCL; the tests expect NCCL's defaults
unset NCCL_ALGO NCCL_PROTO NCCL_COLLNET_ENABLE NCCL_NVLS_ENABLE NCCL_MIN_NCHANNELS NCCL_MAX_NCHANNELS \
      NCCL_MIN_NRINGS NCCL_MAX_NRINGS NCCL_MIN_CTAS NCCL_MAX_CTAS NCCL_BUFFSIZE NCCL_DEBUG \
      NCCL_P2P_DISABLE NCCL_P2P_LEVEL
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
