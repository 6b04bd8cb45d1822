# tests/cli/options_review.sh - sourced by cases.sh (inside run.sh: $C, check,
# pass, fail): options of collective, p2p, validate and replay that met an
# adversarial run (2026-12-02).

# --explain beside --format csv/json: the comment lines go to stderr, stdout stays one JSON value
if command -v python3 > /dev/null; then
    if "$C" collective --topo dgx-h100 --gpus 2 -b 1M -e 1M --format json --explain 2>/dev/null | python3 -m json.tool > /dev/null &&
        "$C" p2p --topo dgx1-v100 --format json --compare tests/data/nccltests/11-dgx1-v100-8gpu-hybridcubemesh-p2p-bidir-matrix.txt 2>/dev/null |
        python3 -m json.tool > /dev/null; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1)); echo "FAIL explain-compare-json: stdout is not one JSON value" >&2
    fi
fi
check explain-csv-stderr 0 "# explain: +1048576 " -- collective --topo dgx-h100 --gpus 2 -b 1M -e 1M --format csv --explain
# --plot with nothing to draw (sizes below one element): a one-line error, not gnuplot's dump
check plot-nothing 2 "--plot .*: no size with bytes and a bandwidth above 0" -- collective --topo dgx-h100 --gpus 2 -b 1 -e 2 -f 2 --plot /dev/null
# validate on a p2pBandwidthLatencyTest log: the options of a collective sweep are refused, not ignored
check validate-p2p-max-error 2 "--max-error is for nccl-tests logs" -- validate --topo dgx1-v100 --max-error=1 tests/data/nccltests/11-dgx1-v100-8gpu-hybridcubemesh-p2p-bidir-matrix.txt
check validate-p2p-algo 2 "--algo is for nccl-tests logs" -- validate --topo dgx1-v100 --algo ring tests/data/nccltests/11-dgx1-v100-8gpu-hybridcubemesh-p2p-bidir-matrix.txt
# a bad NCCL variable in conveyor's own environment is its own error, not the log's ENV line
out=$(NCCL_MAX_NCHANNELS=abc "$C" validate --topo dgx-h100 tests/data/nccl-debug/dgx-h100-allreduce-env.txt 2>&1); rc=$?
if [ $rc = 2 ] && printf '%s' "$out" | grep -q "^conveyor: environment NCCL_MAX_NCHANNELS='abc'"; then
    pass=$((pass + 1))
else
    fail=$((fail + 1)); echo "FAIL validate-own-env: rc=$rc: $out" >&2
fi
# a gzipped Chakra execution trace (.et.gz, as the Chakra loader reads it) is not taken for Kineto's JSON
check replay-chakra-et-gz 0 "tests/data/traces/chakra.0.et.gz \(1 ranks, 3664 ops\)" -- replay --topo dgx-a100 --gpus 1 tests/data/traces/chakra.0.et.gz
# -m calls run as one collective of -m x the size: that size has the same 1T limit as -e
check coll-agg-size-limit 2 "-m 1024 x -e 1099511627776 bytes is above 1T" -- collective --topo dgx-h100 --gpus 2 -m 1024 -b 1T -e 1T
# adaptive_routing=default (the fabric's), the value topo show prints, is taken back by --set
check set-adaptive-default 0 "adaptive_routing=default" -- topo show dgx-h100 --nodes 2 --set adaptive_routing=default
# --set calibration= with no file is an error (it fell back to the topology's own silently)
check set-calibration-empty 2 "--set calibration=: expected a params file" -- topo show hgx-h200 --set calibration=
# validate --algo beside a log's NCCL_ALGO: --algo wins, and the header says the log's was set here instead
check validate-algo-over-log-env 0 "environment from the log's NCCL INFO lines: NCCL_MAX_NCHANNELS=8 \(set here instead: NCCL_ALGO\)" -- validate --topo dgx-h100 --algo tree tests/data/nccl-debug/dgx-h100-allreduce-env.txt
# the replay timeline names each GPU's stream tracks (Perfetto showed bare numbers)
check replay-timeline-stream-names 0 '"name":"thread_name","pid":1,"tid":1,"args":\{"name":"stream 1 \(collective\)"\}' -- replay --topo dgx-h100 --gpus 2 docs/examples/two-rank-overlap.json --timeline /dev/stdout
# -d all -o all as JSON: the document's type and redop say "all", each result its own
check coll-json-all-types 0 '"type":	"all",' -- collective --topo dgx-h100 -b 1M -e 2M -f 2 -d all -o all --format json
