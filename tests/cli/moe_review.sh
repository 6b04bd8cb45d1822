# tests/cli/moe_review.sh - sourced by cases.sh (inside run.sh: $C, check,
# pass, fail). A review of the mixture-of-experts workloads (2026-12-02):
# the expert layout and the memory estimate, end to end through `workload`
# and `scale`. Unit-level closed forms: tests/test_workload.c
# (/workload/memory-experts-tp, /workload/expert-gemms-grouped,
# /workload/ep-groups-consecutive).

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
rm -rf "$moe_dir"
