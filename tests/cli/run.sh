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
# replay_near NAME WANT_US TOL NOTE -- ARGS: `replay ARGS --format json`'s step_time_s is within TOL (a
# fraction) of WANT_US, and the note it prints on stderr holds NOTE (a fixed string; "" for any)
replay_near() {
    name=$1; want=$2; tol=$3; note=$4; shift 5
    nerr=$(mktemp)
    got=$("$C" replay "$@" --format json 2>"$nerr" | sed -n 's/^{"step_time_s": \([0-9.e-]*\),.*/\1/p')
    if { [ -z "$note" ] || grep -qF -- "$note" "$nerr"; } &&
        awk -v g="$got" -v w="$want" -v t="$tol" 'BEGIN { d = g * 1e6 - w; exit !(w > 0 && (d < 0 ? -d : d) < t * w) }'; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $name: replay $got s, want $want us, note '$note' in:" >&2
        head -3 "$nerr" >&2
    fi
    rm -f "$nerr"
}
. "$(dirname "$0")/cases.sh"
echo "cli: $pass passed, $fail failed"
[ "$fail" = 0 ]
