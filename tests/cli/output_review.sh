# tests/cli/output_review.sh - sourced by cases.sh (inside run.sh: $C, check,
# pass, fail). A review of the output formats against what the real tools
# write and read (2026-12-03): nccl-tests' text, the Chrome/Perfetto timeline,
# CSV and JSON. Inputs are written at run time.
or_dir=$(mktemp -d)

# 1. nccl-tests -c 0 checks nothing and prints "N/A" under #wrong ("  %7s  %6s  %6s    N/A", util.cu
#    writeBenchmarkLineBody; file 55 has them); conveyor printed 0. -z 1 prints "# Blocking Enabled:
#    wait for completion and barrier after each collective " after the parameter line; it was left
#    out. validate reads both back.
check nccltests-c0-na 0 '^     1048576        262144     float     sum      -1    34\.44   30\.44   53\.28    N/A    34\.44   30\.44   53\.28    N/A$' -- collective --topo dgx-h100 -b 1M -e 1M -c 0
out=$("$C" collective --topo dgx-h100 -b 1M -e 1M -z 1 2>&1)
if printf '%s\n' "$out" | awk 'NR == 3 { ok = /unalign: 0$/ } NR == 4 { ok = ok && $0 == "# Blocking Enabled: wait for completion and barrier after each collective " }
    NR == 5 { ok = ok && $0 == "#" } END { exit !ok }'; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL nccltests-z1-blocking: no Blocking Enabled line 4 in:" >&2; printf '%s\n' "$out" | head -6 >&2; fi
"$C" collective --topo dgx-h100 -b 1K -e 4M -f 4 -c 0 -z 1 > "$or_dir/c0.txt" 2>&1
grep -q '   N/A$' "$or_dir/c0.txt" || echo 'not N/A' > "$or_dir/c0.txt"
check nccltests-c0-roundtrip 0 'summary: points=7 median_abs_err=0\.0[0-9]%.* max_abs_err=0\.0[0-9]%' -- validate --topo dgx-h100 "$or_dir/c0.txt"

rm -rf "$or_dir"
