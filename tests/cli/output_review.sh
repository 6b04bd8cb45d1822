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

# 2. sendrecv_perf prints -o's reduction ("sum" by default; real file 29: "float     sum      -1") and
#    runs each of -o all's (sendrecv.cu SendRecvRunTest); conveyor printed "none" and ran once. The
#    in-place runs of alltoall and sendrecv are not checked (InitData: reportErrors = in_place ? 0 : 1)
#    and print N/A at -c 1 (file 29: "13.96      0   76967   13.95   13.95    N/A"); conveyor printed 0.
check nccltests-sendrecv-sum 0 '^     1048576        262144     float     sum      -1    20\.94   50\.07   50\.07       0    20\.94   50\.07   50\.07    N/A$' -- collective --topo dgx-h100 --op sendrecv -b 1M -e 1M
check nccltests-alltoall-ip-na 0 '^     1048576         32768     float    none      -1    19\.17   54\.69   47\.85       0    19\.17   54\.69   47\.85    N/A$' -- collective --topo dgx-h100 --op alltoall -b 1M -e 1M
"$C" collective --topo dgx-h100 --op sendrecv -d half -o all -b 1M -e 2M > "$or_dir/sr.txt" 2>&1
check nccltests-sendrecv-o-all 0 '^summary: points=10 median_abs_err=0\.0[0-9]%.* max_abs_err=0\.0[0-9]%' -- validate --topo dgx-h100 "$or_dir/sr.txt"

# 3. validate printed a relative error that rounds to zero with its sign, "-0.00%": 77 rows over 18
#    round trips of conveyor's own tables (here -d int8 -o all: 2 MiB at 48.12 us on both sides).
#    Now "0.00%".
"$C" collective --topo dgx-h100 -b 1M -e 4M -f 2 -d int8 -o all > "$or_dir/all.txt" 2>&1
out=$("$C" validate --topo dgx-h100 "$or_dir/all.txt" 2>&1)
if printf '%s\n' "$out" | awk '/-0\.00%/ { neg++ } / 0\.00%$/ { zero++ } END { exit !(neg == 0 && zero > 0) }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL validate-no-negative-zero: -0.00% in:" >&2; printf '%s\n' "$out" | grep -- '-0\.00%' | head -3 >&2; fi

# 4. p2p --compare and replay's collectives against their traced durations printed an error that
#    rounds to zero as "-0.0": p2p's own DGX-1 output compared with itself, 144 of 448 cells; an
#    all_reduce traced at 198.75 us and simulated at 198.72 us, "-0.0%". Now "+0.0".
"$C" p2p --topo dgx1-v100 > "$or_dir/p2p.txt" 2>&1
out=$("$C" p2p --topo dgx1-v100 --compare "$or_dir/p2p.txt" 2>&1)
if printf '%s\n' "$out" | awk '/ -0\.0$/ { neg++ } / \+0\.0$/ { zero++ } END { exit !(neg == 0 && zero == 304) }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL p2p-compare-no-negative-zero:" >&2; printf '%s\n' "$out" | grep -c -- ' -0\.0$' >&2; fi
sed 's/"bytes": "64M", "stream": 1, "deps": \["bwd1"\]}/"bytes": "64M", "stream": 1, "dur_us": 198.75, "deps": ["bwd1"]}/' \
    docs/examples/two-rank-overlap.json > "$or_dir/traced.json"
check replay-error-no-negative-zero 0 '^  all_reduce             67108864      2      1      1        198\.8        198\.7    \+0\.0%$' -- replay --topo dgx-h100 --gpus 2 "$or_dir/traced.json"

rm -rf "$or_dir"
