#!/bin/sh
# Command-line tests: each case runs the binary and checks the exit code and
# a pattern in its output. Prints 'N passed, N failed'.
C=${1:-build/conveyor}
# NCCL's own switches change what conveyor simulates, as they would change
# NCCL; the tests expect NCCL's defaults
. "$(dirname "$0")/../../scripts/nccl-env-clean.sh"
pass=0; fail=0
# check NAME WANT_RC PATTERN -- ARGS...
check() {
    name=$1; want=$2; pat=$3; shift 4
    out=$("$C" "$@" 2>&1); rc=$?
    if [ "$rc" = "$want" ] && printf '%s' "$out" | grep -qE -- "$pat"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $name: rc=$rc (want $want), pattern '$pat' in:" >&2
        printf '%s\n' "$out" | head -20 >&2
    fi
}
# same_output NAME -- ARGS: two runs give byte-identical stdout
same_output() {
    name=$1; shift 2
    a=$("$C" "$@" 2>&1 | cksum); b=$("$C" "$@" 2>&1 | cksum)
    if [ "$a" = "$b" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $name: outputs differ" >&2; fi
}
. "$(dirname "$0")/cases.sh"
echo "cli: $pass passed, $fail failed"
[ "$fail" = 0 ]
