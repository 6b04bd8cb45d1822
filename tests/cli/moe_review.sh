# tests/cli/moe_review.sh - sourced by cases.sh (inside run.sh: $C, check,
# pass, fail). A review of the mixture-of-experts workloads (2026-12-02):
# the expert layout and the memory estimate, end to end through `workload`
# and `scale`. Unit-level closed forms: tests/test_workload.c
# (/workload/memory-experts-tp, /workload/expert-gemms-grouped,
# /workload/ep-groups-consecutive, /workload/ep-folds-tp-cp, /workload/expert-tensor-parallel).

# 1. EP groups are ep consecutive ranks (Megatron's expert layout with expert-tensor-parallel 1):
#    at TP 2, EP 8 on 16 GPUs rank 0's all-to-all group is ranks 0-7, one server. It was 8 DP ranks
#    at one TP rank (0 2 4 ... 14), across two servers: 18428 ms a step on DGX H100s, 15.2% of it
#    all-to-all waiting on the network; now 16416 ms and 0.1%.
moe_dir=$(mktemp -d)
"$C" workload --model mixtral-8x7b --gpus 16 --tp 2 --ep 8 --sp --seq 256 --topo dgx-h100 -o "$moe_dir/t.json" > /dev/null 2>&1
g=$(awk '/"name":/ { n = $2 } /"ranks":[ \t]*\[/ { r = $0; sub(/.*"ranks":[ \t]*/, "", r); grp[n] = r }
    /"name":[ \t]*"ep_dispatch"/ { want = 1 } want && /"group":/ { gsub(/[",]/, "", $2); print grp["\"" $2 "\","]; exit }' "$moe_dir/t.json")
if [ "$g" = "[0, 1, 2, 3, 4, 5, 6, 7]" ]; then
    pass=$((pass + 1))
else
    fail=$((fail + 1)); echo "FAIL moe-ep-group-in-server: rank 0's ep_dispatch group is '$g'" >&2
fi
check moe-ep-tp2-step 0 '^dgx-h100 +H100-SXM +16 +2 +1 +8 +576 +[0-9.]+ .* [0-9.]+ +0\.[0-9] +[0-9]+-[0-9]+$' -- scale --model mixtral-8x7b --ep 8 --sp --zero 1 --recompute --systems dgx-h100 --gpus 16 --tp 2 --global-batch 576

# 2. The experts' ZeRO states shard over the tp x dp / ep ranks that hold them (the trace reduces
#    their gradients over that group): Mixtral at TP 2, EP 8 on 16 GPUs was 88.4 GiB, over an H100
check moe-memory-experts-tp 0 'memory estimate of the busiest GPU 56\.9 GiB of 80' -- workload --model mixtral-8x7b --gpus 16 --tp 2 --ep 8 --sp --zero 1 --recompute -o /dev/null

# 3. EP folds over TP and CP ranks (Megatron's MoE parallel folding): ep divides tp x cp x dp, not dp.
#    TP 8, EP 8 on one server was refused ("dp (1) it divides"); ep not dividing tp x cp x dp still is,
#    with exit 2. scale's rule keeps EP inside DP where such a layout exists (16 GPUs: TP 2, DP 8) and
#    folds where pinned so (8 GPUs at --tp 8: DP 1).
check moe-ep-folds-tp 0 '8 GPUs = tp 8 x pp 1 x dp 1 x cp 1, ep 8, sp' -- workload --model mixtral-8x7b --gpus 8 --tp 8 --ep 8 --sp -o /dev/null
check moe-ep-not-dividing 2 'ep \(8\) needs an MoE model whose experts \(8\) and tp\*cp\*dp \(2\*1\*2\) it divides' -- workload --model mixtral-8x7b --gpus 4 --tp 2 --ep 8 --sp -o /dev/null
check moe-ep-rule-inside-dp 0 '^dgx-h100 +H100-SXM +16 +2 +1 +8 ' -- scale --model mixtral-8x7b --ep 8 --sp --zero 1 --recompute --systems dgx-h100 --gpus 16
check moe-ep-rule-folded 0 '^dgx-h100 +H100-SXM +8 +8 +1 +1 ' -- scale --model mixtral-8x7b --ep 8 --sp --zero 1 --recompute --systems dgx-h100 --gpus 8 --tp 8

# 4. Expert tensor parallelism (--etp, Megatron's --expert-tensor-parallel-size): named in the header,
#    its all-gather and reduce-scatter in the trace, sizes that do not tile refused with exit 2.
check moe-etp-header 0 '16 GPUs = tp 2 x pp 1 x dp 8 x cp 1, ep 4, etp 2, sp' -- workload --model mixtral-8x7b --gpus 16 --tp 2 --ep 4 --etp 2 --sp --seq 256 -o "$moe_dir/etp.json"
check moe-etp-ops 0 '"etp_rs_bwd"' -- workload --model mixtral-8x7b --gpus 16 --tp 2 --ep 4 --etp 2 --sp --seq 256 -o -
check moe-etp-not-tiling 2 'etp \(4\) needs an MoE model whose expert FFN \(14336\) it divides, and ep\*etp \(4\*4\) dividing tp\*cp\*dp \(2\*1\*4\)' -- workload --model mixtral-8x7b --gpus 8 --tp 2 --ep 4 --etp 4 --sp -o /dev/null
check moe-etp-zero 2 '--etp' -- workload --model mixtral-8x7b --gpus 8 --etp 0 -o /dev/null
# Megatron-LM refuses TP and EP above 1 without SP; conveyor generates it and says so on stderr (workload, scale)
check moe-megatron-sp-note 0 'note: Megatron-LM requires --sp with tp > 1 and ep > 1' -- workload --model mixtral-8x7b --gpus 16 --tp 2 --ep 8 --seq 256 -o /dev/null
check moe-megatron-sp-note-scale 0 'conveyor scale: note: Megatron-LM requires --sp' -- scale --model mixtral-8x7b --ep 8 --systems dgx-h100:16 --tp 2 --seq 256

# 5. A custom MoE model: Mixtral 8x7B's published shape given on the command line writes the same trace,
#    byte for byte, as the preset; bad MoE shapes exit 2.
"$C" workload --model mixtral-8x7b --gpus 8 --ep 8 --sp --seq 256 -o "$moe_dir/preset.json" > /dev/null 2>&1
"$C" workload --model custom --layers 32 --hidden 4096 --heads 32 --kv-heads 8 --gated --ffn 14336 --vocab 32000 \
    --experts 8 --topk 2 --gpus 8 --ep 8 --sp --seq 256 -o "$moe_dir/custom.json" > /dev/null 2>&1
if [ -s "$moe_dir/preset.json" ] && cmp -s "$moe_dir/preset.json" "$moe_dir/custom.json"; then
    pass=$((pass + 1))
else
    fail=$((fail + 1)); echo "FAIL moe-custom-as-preset: custom Mixtral's trace differs from the preset's" >&2
fi
check moe-custom-topk 2 'MoE shape: need experts in 1\.\.100000, topk in 1\.\.experts \(4\)' -- workload --model custom --layers 4 --hidden 1024 --heads 8 --experts 4 --topk 8 -o /dev/null
check moe-custom-no-experts 2 'describe an MoE model: give --experts' -- workload --model custom --layers 4 --hidden 1024 --heads 8 --topk 2 -o /dev/null
check moe-custom-on-preset 2 '--experts, --topk, --expert-ffn, --shared-ffn, --dense-layers and --moe-layer-freq describe a custom MoE model' -- workload --model mixtral-8x7b --experts 16 -o /dev/null
check moe-custom-scale 0 '^dgx-h100 +H100-SXM +8 ' -- scale --model custom --layers 8 --hidden 2048 --heads 16 --gated --experts 16 --topk 4 --expert-ffn 1024 --shared-ffn 2048 --dense-layers 1 --ep 8 --sp --systems dgx-h100:8 --seq 512

# 6. scale --auto on an MoE model without --ep searches EP too (powers of two dividing the experts): it
#    names the EP it kept, and its step is no slower than the best with EP pinned to 1 (a subset of its
#    search); with --ep given the line names none.
check moe-auto-ep-named 0 '^# dgx-h100 16 GPUs: fastest of [0-9]+ layouts that fit \(--auto\): ep [0-9]+$' -- scale --model mixtral-8x7b --sp --zero 1 --recompute --auto --systems dgx-h100:16 --seq 256
check moe-auto-ep-pinned 0 '^# dgx-h100 16 GPUs: fastest of [0-9]+ layouts? that fit \(--auto\)$' -- scale --model mixtral-8x7b --ep 2 --sp --zero 1 --recompute --auto --systems dgx-h100:16 --seq 256
free=$("$C" scale --model mixtral-8x7b --sp --zero 1 --recompute --auto --systems dgx-h100:16 --seq 256 --format csv 2>/dev/null | tail -1 | cut -d, -f9)
one=$("$C" scale --model mixtral-8x7b --ep 1 --sp --zero 1 --recompute --auto --systems dgx-h100:16 --seq 256 --format csv 2>/dev/null | tail -1 | cut -d, -f9)
if awk -v f="$free" -v o="$one" 'BEGIN { exit !(f > 0 && o > 0 && f <= o) }'; then
    pass=$((pass + 1))
else
    fail=$((fail + 1)); echo "FAIL moe-auto-ep-no-slower: --auto with EP searched $free s, with EP 1 $one s" >&2
fi
rm -rf "$moe_dir"
