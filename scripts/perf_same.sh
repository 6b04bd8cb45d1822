#!/bin/sh
# perf_same.sh OLD NEW: run a fixed list of conveyor commands with two binaries and cmp every
# output (stdout and stderr, byte for byte). Used to check that a speed change leaves every
# simulated result as it was. Exit 0 when all match, 1 otherwise. Takes a few minutes.
set -u
[ $# -eq 2 ] || { echo "usage: $0 OLD_BINARY NEW_BINARY" >&2; exit 2; }
OLD=$(realpath "$1"); NEW=$(realpath "$2")
cd "$(dirname "$0")/.." || exit 2
T=$(mktemp -d)
if [ -n "${KEEP:-}" ]; then echo "outputs kept in $T"; else trap 'rm -rf "$T"' EXIT; fi
S=tests/data/sweep
TR=tests/data/traces
N=0; FAIL=0
run() {  # run NAME ARGS...: both binaries, compare stdout, stderr and exit status
    name=$1; shift; N=$((N + 1))
    for w in old new; do
        b=$OLD; [ $w = new ] && b=$NEW
        "$b" "$@" >"$T/$name.$w.out" 2>"$T/$name.$w.err"
        echo $? >"$T/$name.$w.rc"
        # a timeline written to a file: compare it too
        [ -f "$T/tl.json" ] && mv "$T/tl.json" "$T/$name.$w.tl"
    done
    for k in out err rc tl; do
        [ -f "$T/$name.old.$k" ] || continue
        if ! cmp -s "$T/$name.old.$k" "$T/$name.new.$k"; then
            echo "DIFF $name ($k): $*"; FAIL=$((FAIL + 1))
        fi
    done
}
run c_a100_500     collective --topo dgx-a100 --nodes 500 -b 1M -e 1M
run c_ring_h100    collective --topo dgx-h100 --nodes 16 --algo ring -b 256M -e 256M
run c_h100_sweep   collective --topo dgx-h100 --nodes 2 -b 8 -e 256M -f 4 --format json --explain
run c_tree_a100    collective --topo dgx-a100 --nodes 4 --algo tree -b 1K -e 64M -f 8
run c_nvls        collective --topo dgx-h100 --algo nvls -b 1K -e 1G -f 16 --format csv
run c_nvlstree     collective --topo dgx-h100 --nodes 4 --algo nvlstree -b 1M -e 128M -f 8
run c_nvl72        collective --topo gb200-nvl72 --nodes 18 -b 8 -e 1G -f 32
run c_pcie4        collective --topo pcie-gen4-4gpu -b 1K -e 64M -f 8
run c_pcie5_2n     collective --topo pcie-gen5-8gpu-2socket --nodes 2 -b 1M -e 64M -f 4
run c_dgx1_ag      collective --topo dgx1-v100 --op all_gather -b 1K -e 64M -f 8
run c_alltoall     collective --topo dgx-h100 --nodes 4 --op alltoall -b 1M -e 16M -f 4
run c_exact_ring   collective --topo dgx-h100 --nodes 12 --algo ring --exact -b 32M -e 32M
run c_bcast_roots  collective --topo dgx2-v100 --op broadcast -r -1 -b 1M -e 1M
run c_sendrecv     collective --topo hgx-h200 --nodes 2 --op sendrecv -b 1K -e 16M -f 16
run c_rs_pat       collective --topo hgx-b200 --nodes 8 --op reduce_scatter -b 1K -e 32M -f 32
run c_timeline     collective --topo dgx-h100 --nodes 2 -b 4M -e 4M --timeline "$T/tl.json"
export NCCL_COLLNET_ENABLE=1
run c_collnet      collective --topo dgx-h100 --nodes 4 -b 1M -e 64M -f 8
unset NCCL_COLLNET_ENABLE
run r_flightrec    replay --topo dgx-h100 --gpus 4 $TR/flightrec
run r_nccllog      replay --topo dgx-h100 $TR/nccl-log/job-8rank.log
run r_kineto       replay --topo dgx-h100 --gpus 2 --format json $TR/hta_resnet50_rank0.json.gz --ranks 2 --timeline "$T/tl.json"
run r_chakra       replay --topo dgx-h100 --gpus 1 --nodes 2 $TR/chakra.0.et.gz --ranks 2
run r_overlap      replay --topo dgx-h100 --gpus 1 --nodes 2 docs/examples/two-rank-overlap.json
run s_llama7b      scale --model llama2-7b --systems dgx-h100 --gpus 64 --tp 8
run s_llama7b_ex   scale --model llama2-7b --systems dgx-a100 --gpus 32 --tp 8 --exact --format json
run s_breakdown    scale --model gpt3-175b --systems dgx-h100 --gpus 256 --sp --zero 1 --breakdown
for f in $S/*.json; do
    run "w_$(basename "$f" .json)" sweep -j 1 "$f"
done
run p_h100         p2p --topo dgx-h100
run p_dgx1         p2p --topo dgx1-v100 --format csv
run p_pcie         p2p --topo pcie-gen4-8gpu-2socket
echo "$N commands, $FAIL outputs differ"
[ $FAIL -eq 0 ]
