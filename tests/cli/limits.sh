# tests/cli/limits.sh - sourced by cases.sh (inside run.sh: $C, check): inputs
# at the edges of what the models can represent give exit 2 with a message,
# not a wrapped number or a sanitizer report.

# the simulated clock (2^60 ps, about 13 days): a transfer past it is an error
check clock-range-collective 2 "clock's range" -- collective --topo tests/data/topo/slowest-links.json -b 256G -e 256G
check clock-range-alltoall 2 "clock's range" -- collective --topo tests/data/topo/slowest-links.json --op alltoall -b 1T -e 1T
check clock-range-inside 0 "1073741824 +268435456" -- collective --topo tests/data/topo/slowest-links.json -b 1G -e 1G

# workload shapes and sizes past their bounds: the bound in the message, not an int overflow (UBSan)
check wl-hidden-bound 2 "hidden in 1\.\.1000000" -- workload --model custom --layers 2 --hidden 536870912 --heads 1 --gpus 1 -o /dev/null
check wl-layers-bound 2 "layers in 1\.\.100000" -- workload --model custom --layers 1073741824 --hidden 256 --heads 4 --gpus 1 -o /dev/null
check wl-micro-batch-bound 2 "micro-batch must be in 1\.\.1000000" -- workload --model llama3-8b --gpus 8 --pp 2 --micro-batch 1073741824 -o /dev/null
check scale-micro-batch-bound 2 "micro-batch must be in 1\.\.1000000" -- scale --model custom --layers 2 --hidden 8 --heads 1 --ffn 8 --vocab 8 --seq 8 --systems dgx-h100:2 --tp 1 --pp 1 --micro-batch 1073741824 --global-batch 1073741824
check scale-activation-bound 2 "activation elements per GPU: at most 2\^35" -- scale --model custom --layers 2 --hidden 256 --heads 4 --seq 10000000 --micro-batch 100000 --systems dgx-h100:1 --tp 1 --pp 1
# a kernel past the clock (a GPU of 1e-9 TFLOP/s): scale stops with the clock's error, workload will not
# write a trace its reader refuses
check scale-kernel-past-clock 2 "clock's range" -- scale --model llama3-8b --systems dgx-h100:8 --seq 256 --set gpu.peak_tflops=1e-9
check wl-kernel-past-format 2 "attn_fwd\) lasts .* over the format's 1e12" -- workload --model llama3-8b --gpus 8 --set gpu.peak_tflops=1e-9 -o /dev/null
check gpu-kernel-us-negative 2 "gpu.kernel_us: must be in \[0, " -- scale --model llama3-8b --systems dgx-h100:8 --seq 256 --set gpu.kernel_us=-0.5
# workload without --gpus: one replica (tp x pp x cp), or --dp of them; a product past int is an error
check wl-no-gpus 0 "8 GPUs = tp 8 x pp 1 x dp 1 x cp 1" -- workload --model llama3-8b --tp 8 -o /dev/null
check wl-no-gpus-dp 0 "16 GPUs = tp 8 x pp 1 x dp 2 x cp 1" -- workload --model llama3-8b --tp 8 --dp 2 -o /dev/null
check wl-gpus-overflow 2 "more GPUs than an int holds" -- workload --model llama3-8b --tp 1073741824 --pp 1073741824 -o /dev/null
# options that describe something else are refused, not ignored
check wl-gated-preset 2 "--gated, --window-size, --attention-chunk-size and --window-attn-skip-freq describe --model custom" -- workload --model llama3-8b --gated --gpus 8 -o /dev/null
check wl-reuse-no-zero3 2 "reuse-distance is DeepSpeed ZeRO-3's" -- workload --model llama3-8b --reuse-distance 1e9 --gpus 8 -o /dev/null
check wl-gpus-not-multiple-huge 2 "is not a multiple of tp\*pp\*cp = 1073741824\*1073741824\*1" -- workload --model llama3-8b --gpus 8 --tp 1073741824 --pp 1073741824 -o /dev/null
# GB200 NVL72 trays beyond one rack: whole NVLink domains only (a partial one read past the
# collective system's GPU table, ASan heap-buffer-overflow)
check nvl-partial-domain 2 "--nodes 19 leaves a partial NVLink domain \(1 domain of 18 servers and one of 1\)" -- collective --topo gb200-nvl72 --nodes 19 --gpus 1
check nvl-partial-domain-scale 2 "--nodes 32 leaves a partial NVLink domain" -- scale --model llama3-8b --systems gb200-nvl72:128 --seq 256
check nvl-two-domains 0 "# Avg bus bandwidth" -- collective --topo gb200-nvl72 --nodes 36 --gpus 1 -b 1M -e 1M
# a size sweep stops at -e even where size x -f would pass 2^64; more than 4096 sizes is an error, not a cut
rows=$("$C" collective --topo dgx-h100 --gpus 1 -b 16G -e 32G -f 1073741825 2>&1 | grep -c '^ *[0-9]')
if [ "$rows" = 1 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL coll-factor-wrap: $rows rows, want 1" >&2; fi
check coll-too-many-sizes 2 "more than 4096 sizes from 0 to 8192" -- collective --topo dgx-h100 --gpus 2 -b 0 -e 8K -i 1
# replay -g: one host thread launches -g ranks of the trace, which it must divide (as collective's -g)
check replay-g-divides 2 "-g 1024 does not divide the trace's 2 ranks" -- replay --topo dgx-h100 --gpus 2 -g 1024 docs/examples/two-rank-overlap.json
