#!/bin/sh
# scripts/memcheck.sh - valgrind memcheck on the golden scenarios (make
# memcheck). Fails on any memory error and on definite or indirect leaks;
# GLib's one-time type/thread allocations are "still reachable" or
# "possibly lost" and do not count. Logs: build/memcheck/<name>.log.
#   sh scripts/memcheck.sh [build/conveyor]
C=${1:-build/conveyor}
command -v valgrind >/dev/null || { echo "memcheck: valgrind not found (apt-get install valgrind)" >&2; exit 1; }
L=build/memcheck
mkdir -p $L
fail=0
tl=$(mktemp -u /tmp/conveyor-memcheck-XXXXXX.json)
# mc NAME ARGS...: one scenario; exit 0 or 2 (bad input) are both fine as
# long as valgrind reports nothing (it exits 99 when it does).
mc() {
    name=$1; shift
    G_SLICE=always-malloc G_DEBUG=gc-friendly valgrind -q --error-exitcode=99 --leak-check=full \
        --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
        --log-file=$L/$name.log "$C" "$@" > $L/$name.out 2>&1
    rc=$?
    if [ $rc = 99 ] || [ -s $L/$name.log ]; then
        echo "memcheck $name: FAIL (see $L/$name.log)"; head -30 $L/$name.log; fail=1
    else
        echo "memcheck $name: clean (exit $rc)"
    fi
}
mc collective-h100 collective --topo dgx-h100 -b 1M -e 64M -f 4
mc collective-2node collective --topo dgx-h100 --nodes 2 --op alltoall -b 1M -e 4M -f 4
mc validate-a100 validate --topo dgx-a100 tests/data/nccltests/15-a100-sxm4-80gb-8gpu-nvswitch-allreduce.txt
mc topo-show topo show dgx-h100
mc topo-import topo import tests/data/nccl-topo/dgx-a100-like.xml
mc replay-overlap replay --topo dgx-a100 --gpus 2 --timeline "$tl" docs/examples/two-rank-overlap.json
mc replay-kineto replay --topo dgx-a100 --gpus 2 --ranks 2 tests/data/traces/kineto_old_style.json
mc replay-chakra replay --topo dgx-a100 --gpus 2 --ranks 2 tests/data/traces/jsonized.json
mc sweep-small sweep tests/data/sweep/small.json
mc p2p-pcie p2p --topo pcie-gen3-2gpu
mc p2p-compare p2p --topo pcie-gen3-2gpu --compare tests/data/nccltests/22-rtx2080ti-2gpu-pcie3-noP2P-p2pBandwidthLatencyTest.txt
mc scale-pp scale --model llama3-8b --systems dgx-h100:16 --pp 2 --global-batch 16
mc scale-sm-share-off scale --model llama3-8b --systems dgx-h100:16 --global-batch 32 --set gpu.sm_share=0
mc calibrate-fit calibrate fit calibrate/data/h200-2026-11-29/calibration.jsonl
mc topo-calibrated topo show hgx-h200 --set calibration=calibrate/data/h200-2026-11-29/params.json
mc bad-topo topo show tests/bad_input/topo/dangling-link-end.json
mc bad-trace replay --topo dgx-a100 --gpus 2 tests/bad_input/trace/mismatched-collective-size.json
mc bad-nccltests validate --topo dgx-a100 tests/bad_input/nccltests/truncated-row.txt
rm -f "$tl"
exit $fail
