# tests/cli/scale_layouts.sh - sourced by cases.sh (inside run.sh: $C, check):
# scale's layout rule with context parallelism, a pinned PP, interleaving;
# speedup against the smallest size; names in JSON.

# tp x pp x cp x dp = GPUs: context parallel 2 on 8 GPUs leaves tp 4 (the header names cp)
check scale-cp 0 "context parallel 2 \\(p2p\\), expert parallel 1" -- scale --model llama3-8b --seq 256 --systems dgx-h100:8 --cp 2
check scale-cp-row 0 "dgx-h100 +H100-SXM +8 +4 +1 +1 " -- scale --model llama3-8b --seq 256 --systems dgx-h100:8 --cp 2
check scale-cp-json 0 '"tp": 8, "pp": 1, "dp": 1, "cp": 2, "ep": 1' -- scale --model llama3-8b --seq 256 --systems dgx-h100:16 --cp 2 --format json
check scale-cp-auto 0 "fastest of [0-9]+ layouts? that fit" -- scale --model llama3-8b --seq 256 --systems dgx-h100:16 --cp 2 --auto
check scale-cp-none 2 "no layout with cp 3" -- scale --model llama3-8b --seq 252 --systems dgx-h100:8 --cp 3
# --cp-comm (Megatron-LM's --cp-comm-type): the header names it; a2a splits heads over tp*cp; a bad name
# exits 2; as a sweep key, the ring (p2p) is faster than gathering K, V first, and all three run
check scale-cp-comm-header 0 "context parallel 4 \\(allgather\\), expert parallel 1$" -- scale --model llama3-8b --seq 8192 --systems dgx-h100:8 --tp 2 --cp 4 --cp-comm allgather
check scale-cp-comm-bad 2 "--cp-comm 'ring': expected p2p" -- scale --model llama3-8b --seq 8192 --systems dgx-h100:8 --cp 4 --cp-comm ring
check workload-cp-comm-a2a-heads 2 "kv-heads \\(8\\) must be divisible by tp\\*cp \\(2\\*8\\)" -- workload --model llama3-8b --gpus 16 --tp 2 --cp 8 --seq 8192 --cp-comm a2a -o /dev/null
check workload-cp-comm-header 0 "8 GPUs = tp 2 x pp 1 x dp 1 x cp 4 \\(a2a\\), ep 1" -- workload --model llama3-8b --gpus 8 --tp 2 --cp 4 --seq 8192 --cp-comm a2a -o /dev/null
cpc=$("$C" sweep tests/data/sweep/scale-cp-comm.json -j 2 2>/dev/null)
if printf '%s\n' "$cpc" | awk -F, '$2 == "allgather" { a = $3 } $2 == "p2p" { p = $3 } $2 == "a2a" { x = $3 }
                                   END { exit !(a > 0 && x > 0 && p > 0 && p < a) }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL sweep-cp-comm: $cpc" >&2; fi
# a pinned pp (or the interleaved schedule's pp >= 2) lowers the rule's tp: 8 GPUs -> tp 4 x pp 2
check scale-pp-pinned 0 "dgx-h100 +H100-SXM +8 +4 +2 +1 " -- scale --model llama3-8b --seq 256 --systems dgx-h100:8 --pp 2
check scale-pp-pinned-auto 0 "dgx-h100 +H100-SXM +8 +[124] +2 " -- scale --model llama3-8b --seq 256 --systems dgx-h100:8 --pp 2 --auto
check scale-interleaved-8 0 "dgx-h100 +H100-SXM +8 +4 +2 +1 " -- scale --model llama3-8b --seq 256 --systems dgx-h100:8 --schedule interleaved:2
# speedup and efficiency against the smallest size, whatever the order given; a size given twice is refused
check scale-speedup-smallest 0 "dgx-h100 +H100-SXM +8 +8 +1 +1 +4 +[0-9.]+ +[0-9.]+ +[0-9]+ +[0-9.]+ +[0-9.]+ +1\.00 +100\.0" -- scale --model custom --layers 2 --hidden 1024 --heads 8 --systems dgx-h100:16/8
check scale-size-twice 2 "8 GPUs of dgx-h100 given twice" -- scale --model custom --layers 2 --hidden 1024 --heads 8 --systems dgx-h100:8/8
check scale-size-twice-items 2 "given twice" -- scale --model custom --layers 2 --hidden 1024 --heads 8 --systems dgx-h100:8,dgx-h100:8/16
check scale-name-quote 2 "a quote or a control character" -- scale --model llama3-8b --systems 'dgx"h100:8'
# scale takes its systems from --systems: --topo is workload's
check scale-no-topo 2 "Unknown option --topo" -- scale --model llama3-8b --systems dgx-h100:8 --topo dgx-a100
# without --global-batch the layout's memory estimate takes a full pipeline of activations: Llama 3
# 405B on 1,024 H100 under DDP needs PP 64 (PP 32 is 74.0 GiB of 80 x 0.9); a default batch made for
# one replica counted no activations and took PP 16 (96.1 GiB; 96.3 before SwiGLU's and GQA's
# activations) as fitting (docs/scaling.md)
check scale-rule-counts-activations 0 "dgx-h100 +H100-SXM +1024 +8 +64 +2 " -- scale --model llama3-405b --systems dgx-h100 --gpus 1024
check scale-rule-pp16-exceeds 0 "96\.1 GiB of 80" -- workload --model llama3-405b --gpus 1024 --tp 8 --pp 16 --topo dgx-h100 -o /dev/null
# --plot: the ideal speedup line starts at each system's smallest size, as the speedup column does
# (it was x / the first point's GPUs: sizes given largest first drew it 2x off)
if command -v gnuplot > /dev/null 2>&1; then
    sl_svg=$(mktemp)
    "$C" scale --model custom --layers 2 --hidden 1024 --heads 8 --seq 256 --systems dgx-h100:16/8,dgx-a100:16/32 --plot "$sl_svg" > /dev/null 2>&1
    if grep -q "ideal (from 8 GPUs)" "$sl_svg" && grep -q "ideal (from 16 GPUs)" "$sl_svg"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL scale-plot-ideal-per-base" >&2; fi
    rm -f "$sl_svg"
fi
# H200's memory is what nvidia-smi reported on one (143,771 MiB = 140.4 GiB); 141e9 bytes was 131 GiB
check h200-memory-measured 0 "GiB of 140$" -- workload --model llama3-8b --gpus 8 --tp 8 --seq 256 --topo hgx-h200 -o /dev/null
# --auto without --cp searches CP where every CP rank keeps >= 4096 tokens, and without --cp-comm
# each CP > 1 with each of CP's exchanges: the search is the union of the pinned searches (its count
# their sum, its step their fastest), and names the CP and exchange it kept; the header then names no CP. Global batch 2 on 16 GPUs leaves DP <= 2, so TP, CP or PP must take 8.
sl_m="--model custom --layers 4 --hidden 1024 --heads 8 --vocab 1024 --seq 32768 --global-batch 2 --systems dgx-h100:16 --auto"
sl_all=$("$C" scale $sl_m 2>&1)
sl_pin=$(for k in 1 2 4 8; do "$C" scale $sl_m --cp $k 2>&1; done)
if printf '%s\n' "$sl_all" | grep -q '^# scale: custom, 2 x 32768 tokens per step (strong scaling), bf16, DDP, CP searched (and its exchange: p2p, allgather, a2a)$' &&
    printf '%s\n' "$sl_all" | grep -qE '^# dgx-h100 16 GPUs: fastest of [0-9]* layouts that fit \(--auto\): cp [248] \((p2p|allgather|a2a)\)$' &&
    { printf '%s\n' "$sl_pin" | awk '/fastest of/ { n += $7 } $1 == "dgx-h100" && (!b || $9 < b) { b = $9 } END { print n, b }'
      printf '%s\n' "$sl_all" | awk '/fastest of/ { n = $7 } $1 == "dgx-h100" { b = $9 } END { print n, b }'; } |
    awk 'NR == 1 { a = $0 } NR == 2 { exit !(a == $0) }'; then pass=$((pass + 1))
else fail=$((fail + 1)); echo "FAIL scale-auto-cp-union:" >&2; printf '%s\n--\n%s\n' "$sl_all" "$sl_pin" >&2; fi
# with --cp-comm given the exchange is pinned: the header names it, the line does not
check scale-auto-cp-comm-pinned 0 '^# scale: custom, .*CP searched \(allgather\)$' -- scale $sl_m --cp-comm allgather
check scale-auto-cp-comm-json 0 '"cp_comm": "(p2p|allgather|a2a)"' -- scale $sl_m --format json
# up to seq 8191 only CP 1 (the line names none); with --cp given, CP is pinned
check scale-auto-cp-short 0 '^# dgx-h100 16 GPUs: fastest of [0-9]+ layouts that fit \(--auto\)$' -- scale --model custom --layers 4 --hidden 1024 --heads 8 --vocab 1024 --seq 4096 --global-batch 2 --systems dgx-h100:16 --auto
# more layouts fit than the cap (64 with EP searched): each (TP, CP, EP)'s shallowest pipeline goes
# first, so every PP 1 layout is among those tried and --auto is no slower than --pp 1 (which tries
# them all); the line says how many fitted
sl_moe="--model custom --layers 4 --hidden 512 --heads 8 --experts 64 --topk 2 --expert-ffn 256 --vocab 1024 --seq 128 --systems dgx-h100:64 --auto"
check scale-auto-cap 0 '^# dgx-h100 64 GPUs: fastest of 64 of the [0-9]+ layouts that fit \(--auto; shallowest pipelines first\): ep [0-9]+$' -- scale $sl_moe
sl_a=$("$C" scale $sl_moe 2>/dev/null | awk '$1 == "dgx-h100" { print $9 }')
sl_p=$("$C" scale $sl_moe --pp 1 2>/dev/null | awk '$1 == "dgx-h100" { print $9 }')
if [ -n "$sl_a" ] && awk -v a="$sl_a" -v p="$sl_p" 'BEGIN { exit !(a <= p) }'; then pass=$((pass + 1))
else fail=$((fail + 1)); echo "FAIL scale-auto-cap-shallow-first: --auto $sl_a ms, --pp 1 $sl_p ms" >&2; fi
# --dtype fp8 (Transformer Engine): refused on a GPU without fp8; the casts, the weights' cast and the
# amax reductions in the trace
check scale-fp8-on-a100 2 "^conveyor: --dtype fp8: the A100-SXM4 has no fp8 tensor cores" -- scale --model gpt-1.7b --systems dgx-a100:8 --tp 1 --dtype fp8 --seq 256
check workload-fp8-amax 0 '"name":.?"fp8_amax_fwd"' -- workload --model llama3-8b --gpus 8 --tp 2 --dtype fp8 --seq 256 --global-batch 8 -o -
check workload-fp8-weight-cast 0 '"name":.?"fp8_weight_cast"' -- workload --model llama3-8b --gpus 8 --tp 2 --dtype fp8 --seq 256 --global-batch 8 -o -
# --fp8-param-gather (Megatron-LM's): needs --dtype fp8 and ZeRO-1/2 (exit 2); the header says so; as a sweep
# key, gathering the weights in fp8 shortens the step
check scale-fp8-param-gather-needs-zero 2 "--fp8-param-gather needs --dtype fp8 and the distributed optimizer" -- scale --model llama3-8b --systems dgx-h100:8 --tp 2 --dtype fp8 --fp8-param-gather --seq 256
check scale-fp8-param-gather-header 0 "^# scale: llama3-8b, .*, fp8, ZeRO.*, weights gathered in fp8" -- scale --model llama3-8b --systems dgx-h100:8 --tp 2 --dtype fp8 --zero 1 --fp8-param-gather --seq 256
fpg=$("$C" sweep tests/data/sweep/scale-fp8-param-gather.json -j 2 2>/dev/null)
if printf '%s\n' "$fpg" | awk -F, 'NR == 2 && $2 == "off" { a = $3 } NR == 3 && $2 == "on" { b = $3 } END { exit !(a > 0 && b > 0 && b < a) }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL sweep-fp8-param-gather: $fpg" >&2; fi
# mxfp8 under --fp8-param-gather: gathered in bf16 and cast while copied out (fp8_param_cast); with
# --reuse-grad-buf-for-mxfp8-param-ag the header says where, and the memory estimate drops while the step
# stays (the sweep's memory_gib); the reuse needs mxfp8's gather, blockwise's gather is refused (exit 2)
check scale-mxfp8-param-gather-header 0 "^# scale: llama3-8b, .*, fp8 \\(mxfp8\\), ZeRO, weights kept in mxfp8, gathered in bf16 into the gradient buffer" -- scale --model llama3-8b --systems hgx-b200:8 --tp 8 --sp --zero 1 --dtype fp8 --fp8-recipe mxfp8 --fp8-param-gather --reuse-grad-buf-for-mxfp8-param-ag --seq 256
check scale-mxfp8-param-gather-reuse-needs-mxfp8 2 "--reuse-grad-buf-for-mxfp8-param-ag needs --fp8-recipe mxfp8 and --fp8-param-gather" -- scale --model llama3-8b --systems hgx-b200:8 --tp 8 --zero 1 --dtype fp8 --fp8-param-gather --reuse-grad-buf-for-mxfp8-param-ag --seq 256
check scale-mxfp8-param-gather-blockwise 2 "--fp8-param-gather is modelled for delayed, tensorwise and mxfp8, not blockwise" -- scale --model llama3-8b --systems dgx-h100:8 --tp 8 --zero 1 --dtype fp8 --fp8-recipe blockwise --fp8-param-gather --seq 256
check workload-mxfp8-param-cast 0 '"name":.?"fp8_param_cast"' -- workload --model llama3-8b --topo hgx-b200 --gpus 8 --tp 2 --sp --zero 1 --dtype fp8 --fp8-recipe mxfp8 --fp8-param-gather --seq 256 --global-batch 8 -o -
mgb=$("$C" sweep tests/data/sweep/scale-mxfp8-grad-buf.json -j 2 2>/dev/null)
if printf '%s\n' "$mgb" | awk -F, 'NR == 2 && $2 == "off" { s = $3; m = $4 } NR == 3 && $2 == "on" { t = $3; n = $4 } END { exit !(s > 0 && s == t && n > 0 && n < m) }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL sweep-mxfp8-grad-buf: $mgb" >&2; fi
# --moe-token-dispatcher-type flex (DeepEP): the header and the JSON record say so, the trace has its two
# all-to-alls; refused for a dense model, with expert TP, for an EP group over part of a domain, and
# allgather is not modelled (exit 2); as sweep keys, node-limited routing shortens flex's step and leaves
# alltoall's as it was (a copy per expert either way), and flex beats alltoall across servers
FM="--model custom --layers 2 --hidden 1024 --heads 8 --experts 64 --topk 8 --expert-ffn 512 --gated --seq 1024"
check scale-moe-flex-header 0 "^# scale: custom, .*, flex dispatcher \\(DeepEP\\), experts from 1 of 4 groups" -- scale $FM --systems dgx-h100:32 --ep 32 --global-batch 32 --moe-token-dispatcher-type flex --moe-router-num-groups 4 --moe-router-group-topk 1
check scale-moe-flex-json 0 '"moe_token_dispatcher_type": "flex", "moe_router_num_groups": 4, "moe_router_group_topk": 1' -- scale $FM --systems dgx-h100:32 --ep 32 --global-batch 32 --moe-token-dispatcher-type flex --moe-router-num-groups 4 --moe-router-group-topk 1 --format json
check workload-moe-flex-ops 0 '"name":.?"ep_dispatch_net"' -- workload $FM --topo dgx-h100 --gpus 16 --ep 16 --global-batch 16 --moe-token-dispatcher-type flex -o -
check scale-moe-flex-dense 2 "flex needs an MoE model" -- scale --model llama3-8b --systems dgx-h100:8 --tp 8 --moe-token-dispatcher-type flex --seq 256
check scale-moe-flex-etp 2 "flex is modelled with --etp 1" -- scale $FM --systems dgx-h100:16 --ep 8 --etp 2 --global-batch 16 --moe-token-dispatcher-type flex
check scale-moe-flex-part-domain 2 "must fill whole NVLink domains of 8 GPUs or sit inside one" -- scale --model custom --layers 2 --hidden 1024 --heads 8 --experts 24 --topk 2 --seq 1024 --systems dgx-h100:24 --ep 12 --global-batch 24 --moe-token-dispatcher-type flex
check scale-moe-dispatcher-allgather 2 "allgather .* is not modelled" -- scale $FM --systems dgx-h100:16 --ep 16 --moe-token-dispatcher-type allgather
check scale-moe-router-groups-alone 2 "go together" -- scale $FM --systems dgx-h100:16 --ep 16 --moe-router-num-groups 4
mf=$("$C" sweep tests/data/sweep/scale-moe-flex.json -j 2 2>/dev/null)
if printf '%s\n' "$mf" | awk -F, 'NR == 2 { a1 = $4 } NR == 3 { a4 = $4 } NR == 4 { f1 = $4 } NR == 5 { f4 = $4 } END { exit !(a1 > 0 && a1 == a4 && f1 > 0 && f1 < f4 && f4 < a1) }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL sweep-moe-flex: $mf" >&2; fi
# multi-latent attention (DeepSeek's MLA, Megatron-LM's --kv-lora-rank and companions): the preset carries
# it (671.0 B weights, the report's 671B), the headers and the JSON record say so; refused (exit 2) for a
# preset, without --kv-lora-rank, with grouped-query heads and with --tp-comm-overlap; as a sweep key a
# wider key-value latent lengthens the step
MLA="--model custom --layers 2 --hidden 2048 --heads 16 --gated --seq 2048 --kv-lora-rank 512"
check workload-mla-list 0 "^deepseek-v3-like +61 +7168 +128 +128 +18432 +129280 +256 top-8 +671\\.0 " -- workload --model list
check workload-mla-header 0 "^workload deepseek-v3-like \\(MLA, latents q 1536 / kv 512\\) on dgx-h100" -- workload --model deepseek-v3-like --topo dgx-h100 --gpus 8 --tp 8 --ep 8 --sp --seq 256 -o /dev/null
check scale-mla-header 0 "^# scale: custom \\(MLA, latent kv 512\\), " -- scale $MLA --systems dgx-h100:8 --tp 2 --sp
check scale-mla-json 0 '"q_lora_rank": 768, "kv_lora_rank": 512, "qk_head_dim": 128, "qk_pos_emb_head_dim": 64, "v_head_dim": 96' -- scale $MLA --q-lora-rank 768 --v-head-dim 96 --systems dgx-h100:8 --tp 2 --sp --format json
check scale-mla-preset 2 "--kv-lora-rank and its companions a custom model's multi-latent attention" -- scale --model deepseek-v3-like --kv-lora-rank 256 --systems dgx-h100:8
check scale-mla-companions 2 "describe multi-latent attention: give --kv-lora-rank" -- scale --model custom --layers 2 --hidden 2048 --heads 16 --qk-head-dim 64 --systems dgx-h100:8
check scale-mla-gqa 2 "multi-latent attention has no grouped-query form" -- scale $MLA --kv-heads 4 --systems dgx-h100:8 --tp 2
check scale-mla-tp-comm-overlap 2 "--tp-comm-overlap with multi-latent attention" -- scale $MLA --systems dgx-h100:8 --tp 2 --sp --tp-comm-overlap
mla=$("$C" sweep tests/data/sweep/scale-mla.json -j 2 2>/dev/null)
if printf '%s\n' "$mla" | awk -F, 'NR == 2 && $2 == 128 { a = $3 } NR == 3 && $2 == 1024 { b = $3 } END { exit !(a > 0 && b > a) }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL sweep-mla: $mla" >&2; fi
# --mtp-num-layers (Megatron-LM's; DeepSeek-V3's MTP): the headers and the JSON record say so, its ops are in
# the trace; refused (exit 2) with ZeRO-3, with --tp-comm-overlap, above 16; as a sweep key a second MTP layer
# lengthens the step and adds memory
check workload-mtp-header 0 "^params 671\\.026 B \\+ 11\\.610 B in 1 MTP layer; " -- workload --model deepseek-v3-like --topo dgx-h100 --gpus 8 --tp 8 --ep 8 --sp --seq 256 --mtp-num-layers 1 -o /dev/null
check workload-mtp-ops 0 '"name":.?"mtp_lm_head_bwd"' -- workload $MLA --topo dgx-h100 --gpus 8 --tp 2 --pp 2 --sp --mtp-num-layers 1 -o -
check scale-mtp-header 0 "^# scale: custom \\(MLA, latent kv 512\\), .*, 1 MTP layer" -- scale $MLA --systems dgx-h100:8 --tp 2 --sp --mtp-num-layers 1
check scale-mtp-json 0 '"mtp_num_layers": 2' -- scale $MLA --systems dgx-h100:8 --tp 2 --sp --mtp-num-layers 2 --format json
check scale-mtp-zero3 0 "^# scale: custom .*ZeRO-3, .*1 MTP layer" -- scale $MLA --systems dgx-h100:8 --zero 3 --mtp-num-layers 1
check scale-mtp-zero3-per-param 2 "--mtp-num-layers with --zero3-per-param" -- scale $MLA --systems dgx-h100:8 --zero 3 --zero3-per-param --mtp-num-layers 1
check scale-mtp-tp-comm-overlap 2 "--tp-comm-overlap with --mtp-num-layers" -- scale --model llama3-8b --systems dgx-h100:8 --tp 2 --sp --tp-comm-overlap --mtp-num-layers 1 --seq 256
check scale-mtp-range 2 "--mtp-num-layers must be in 1..16" -- scale $MLA --systems dgx-h100:8 --mtp-num-layers 17
mtp=$("$C" sweep tests/data/sweep/scale-mtp.json -j 2 2>/dev/null)
if printf '%s\n' "$mtp" | awk -F, 'NR == 2 && $2 == 1 { a = $3; m = $4 } NR == 3 && $2 == 2 { b = $3; n = $4 } END { exit !(a > 0 && b > a && n > m) }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL sweep-mtp: $mtp" >&2; fi
# --decoder-first/last-pipeline-num-layers (Megatron-LM's): workload prints the stages (and an interleaved
# stage's chunks); counts that do not split evenly over the middle stages or a stage's chunks exit 2; the
# JSON record carries them
check workload-stage-counts 0 "uneven stages of 3,3,3,1 layers" -- workload --model custom --layers 10 --hidden 1024 --heads 8 --topo dgx-h100 --gpus 4 --pp 4 --decoder-last-pipeline-num-layers 1 -o /dev/null
check scale-stage-counts-uneven 2 "the other 8 of the 10 layers must split evenly over the 3 middle stages" -- scale --model custom --layers 10 --hidden 1024 --heads 8 --systems dgx-h100:4 --tp 1 --pp 4 --decoder-last-pipeline-num-layers 2
check scale-stage-counts-interleaved 2 "over its 2 model chunks" -- scale --model custom --layers 16 --hidden 1024 --heads 8 --systems dgx-h100:4 --tp 1 --pp 4 --schedule interleaved:2 --decoder-first-pipeline-num-layers 3 --decoder-last-pipeline-num-layers 1
check workload-stage-counts-interleaved 0 "uneven chunks of 2,2 . 2,2 . 2,2 . 1,1 layers" -- workload --model custom --layers 14 --hidden 1024 --heads 8 --topo dgx-h100 --gpus 4 --pp 4 --schedule interleaved:2 --decoder-last-pipeline-num-layers 2 -o /dev/null
check scale-stage-counts-header 0 "^# scale: custom, .*, 4 layers on the first stage, 2 on the last$" -- scale --model custom --layers 10 --hidden 1024 --heads 8 --systems dgx-h100:4 --tp 1 --pp 4 --decoder-first-pipeline-num-layers 4 --decoder-last-pipeline-num-layers 2
check scale-stage-counts-header-last 0 "^# scale: custom, .*, 1 layer on the last stage$" -- scale --model custom --layers 10 --hidden 1024 --heads 8 --systems dgx-h100:4 --tp 1 --pp 4 --decoder-last-pipeline-num-layers 1
check scale-stage-counts-json 0 '"decoder_first_pipeline_num_layers": 4, "decoder_last_pipeline_num_layers": 2' -- scale --model custom --layers 10 --hidden 1024 --heads 8 --systems dgx-h100:4 --tp 1 --pp 4 --decoder-first-pipeline-num-layers 4 --decoder-last-pipeline-num-layers 2 --format json
# --pipeline-model-parallel-layout (Megatron-LM's): workload prints each chunk's decoder layers with the
# embedding, MTP and loss; scale's header and JSON carry the layout; a layout that says what the split rule
# does writes the same trace; bad layouts exit 2 with the character at fault; scale needs --pp, not --auto;
# as a sweep key, the MTP layer and the loss on stages of their own beat both on the last stage
PL="--model custom --layers 6 --hidden 1024 --heads 8 --gated --mtp-num-layers 1"
check workload-pp-layout 0 "layout 'E\|t\*3\|t\*3m\|L': 1F1B, decoder layers E\+0 \| 3 \| 3\+m \| 0\+L$" -- workload $PL --topo dgx-h100 --gpus 4 --pp 4 --pipeline-model-parallel-layout 'E|t*3|t*3m|L' -o /dev/null
check workload-pp-layout-interleaved 0 "interleaved 1F1B \(2 model chunks per pp rank\), decoder layers E\+1,1 \| 1,1 \| 1,1\+m\+L$" -- workload $PL --topo dgx-h100 --gpus 3 --pp 3 --global-batch 6 --pipeline-model-parallel-layout 'Et|(t|)*4tmL' -o /dev/null
check scale-pp-layout-header 0 "^# scale: custom, .*, 1 MTP layer, pipeline layout Et\*3\|t\*3m\|L \(MTP on stage 1 of 3\)$" -- scale $PL --systems dgx-h100:3 --tp 1 --pp 3 --pipeline-model-parallel-layout 'Et*3|t*3m|L'
check scale-pp-layout-header-interleaved 0 "^# scale: custom, .*, 1 MTP layer, pipeline layout Et\*3\|t\*3\|\|mL, interleaved 1F1B \(2 model chunks per pp rank\)$" -- scale $PL --systems dgx-h100:4 --tp 1 --pp 2 --pipeline-model-parallel-layout 'Et*3|t*3||mL'
check scale-pp-layout-json 0 '"pipeline_model_parallel_layout": "E\|t\*3\|t\*3m\|L"' -- scale $PL --systems dgx-h100:4 --tp 1 --pp 4 --pipeline-model-parallel-layout 'E|t*3|t*3m|L' --format json
a=$("$C" workload --model llama3-8b --topo dgx-h100 --gpus 16 --tp 2 --pp 4 --schedule interleaved:2 -o - 2>/dev/null | cksum)
b=$("$C" workload --model llama3-8b --topo dgx-h100 --gpus 16 --tp 2 --pp 4 --pipeline-model-parallel-layout 'Et*4|(t*4|)*6t*4L' -o - 2>/dev/null | cksum)
if [ "$a" = "$b" ] && [ "${a%% *}" != "$(printf '' | cksum | cut -d' ' -f1)" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL workload-pp-layout-same-trace: $a / $b" >&2; fi
check scale-pp-layout-char 2 "'E\|t\*3\|t#3m\|L': unknown character '#' at character 8" -- scale $PL --systems dgx-h100:4 --tp 1 --pp 4 --pipeline-model-parallel-layout 'E|t*3|t#3m|L'
check scale-pp-layout-paren 2 "'\(' at character 3 is not closed" -- scale $PL --systems dgx-h100:4 --tp 1 --pp 4 --pipeline-model-parallel-layout 'E|(t|t*5m|L'
check scale-pp-layout-stages 2 "has 4 virtual stages, not a multiple of pp 3" -- scale $PL --systems dgx-h100:3 --tp 1 --pp 3 --pipeline-model-parallel-layout 'E|t*3|t*3m|L'
check scale-pp-layout-layers 2 "places 5 decoder layers \(t\), the model has 6" -- scale $PL --systems dgx-h100:4 --tp 1 --pp 4 --pipeline-model-parallel-layout 'E|t*2|t*3m|L'
check scale-pp-layout-mtp-first 2 "the MTP layers cannot be on the first pp rank" -- scale $PL --systems dgx-h100:4 --tp 1 --pp 2 --pipeline-model-parallel-layout 'Et*3|t*3|m|L'
check scale-pp-layout-schedule 2 "gives 1 model chunk per pp rank .*but 2 were given \(--schedule interleaved:2" -- scale $PL --systems dgx-h100:4 --tp 1 --pp 4 --schedule interleaved:2 --pipeline-model-parallel-layout 'E|t*3|t*3m|L'
check scale-pp-layout-stage-counts 2 "the layout places every layer" -- scale $PL --systems dgx-h100:4 --tp 1 --pp 4 --decoder-first-pipeline-num-layers 3 --pipeline-model-parallel-layout 'E|t*3|t*3m|L'
check scale-pp-layout-no-pp 2 "--pipeline-model-parallel-layout fixes the pipeline: give --pp" -- scale $PL --systems dgx-h100:4 --pipeline-model-parallel-layout 'E|t*3|t*3m|L'
check scale-pp-layout-auto 2 "give --pp .*, not --auto" -- scale $PL --systems dgx-h100:4 --pp 4 --auto --pipeline-model-parallel-layout 'E|t*3|t*3m|L'
ppl=$("$C" sweep tests/data/sweep/scale-pp-layout.json -j 2 2>/dev/null)
if printf '%s\n' "$ppl" | awk -F, 'NR == 2 { a = $3 } NR == 3 { b = $3 } END { exit !(a > 0 && b > 0 && b < a) }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL sweep-pp-layout: $ppl" >&2; fi
# --account-for-embedding/loss-in-pipeline-split (Megatron-LM's): the even split with the embedding and the loss
# counted as layers, shown as its layout; layers that do not split evenly, and either with a layout or the stage
# counts, exit 2; as a sweep key, counting the LM head shortens the last stage's step
check workload-pp-split 0 "layout 'Et\*5\|\(t\*6\|\)\*14t\*5L': 1F1B, decoder layers E\+5 \| 6 \| .* \| 6 \| 5\+L$" -- workload --model custom --layers 94 --hidden 1024 --heads 8 --topo dgx-h100 --gpus 16 --pp 16 --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split -o /dev/null
check scale-pp-split-uneven 2 "the 10 layers \+ the loss \(11\) must split evenly over pp x V = 4 x 1 virtual stages" -- scale --model custom --layers 10 --hidden 1024 --heads 8 --systems dgx-h100:4 --tp 1 --pp 4 --account-for-loss-in-pipeline-split
check scale-pp-split-layout 2 "with --pipeline-model-parallel-layout: one way of splitting the layers" -- scale $PL --systems dgx-h100:4 --tp 1 --pp 4 --account-for-loss-in-pipeline-split --pipeline-model-parallel-layout 'E|t*3|t*3m|L'
check scale-pp-split-counts 2 "with --decoder-first/last-pipeline-num-layers: one way" -- scale $PL --systems dgx-h100:4 --tp 1 --pp 4 --account-for-embedding-in-pipeline-split --decoder-last-pipeline-num-layers 1
check scale-pp-split-no-pp 2 "--account-for-embedding/loss-in-pipeline-split fixes the pipeline: give --pp" -- scale $PL --systems dgx-h100:4 --account-for-loss-in-pipeline-split
pps=$("$C" sweep tests/data/sweep/scale-pp-split.json -j 2 2>/dev/null)
if printf '%s\n' "$pps" | awk -F, 'NR == 2 && $2 == "off" { a = $3 } NR == 3 && $2 == "on" { b = $3 } END { exit !(a > 0 && b > 0 && b < a) }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL sweep-pp-split: $pps" >&2; fi
# --moe-expert-capacity-factor / --moe-pad-expert-input-to-capacity (Megatron-LM's): the header and the JSON
# record say so; refused (exit 2) padding without the factor, padding with flex, a factor below 1 with flex, a
# dense model, a factor that is not a positive number; as a sweep key with padding the step grows with the factor
check scale-moe-capacity-header 0 "^# scale: custom, .*, expert capacity 1.25 \\(padded\\)" -- scale $FM --systems dgx-h100:32 --ep 32 --global-batch 32 --moe-expert-capacity-factor 1.25 --moe-pad-expert-input-to-capacity
check scale-moe-capacity-json 0 '"moe_expert_capacity_factor": 1.25, "moe_pad_expert_input_to_capacity": true' -- scale $FM --systems dgx-h100:32 --ep 32 --global-batch 32 --moe-expert-capacity-factor 1.25 --moe-pad-expert-input-to-capacity --format json
check scale-moe-capacity-pad-alone 2 "--moe-pad-expert-input-to-capacity needs --moe-expert-capacity-factor" -- scale $FM --systems dgx-h100:32 --ep 32 --global-batch 32 --moe-pad-expert-input-to-capacity
check scale-moe-capacity-pad-flex 2 "flex dispatcher does not take it" -- scale $FM --systems dgx-h100:32 --ep 32 --global-batch 32 --moe-expert-capacity-factor 1 --moe-pad-expert-input-to-capacity --moe-token-dispatcher-type flex
check scale-moe-capacity-drop-flex 2 "below 1 with flex" -- scale $FM --systems dgx-h100:32 --ep 32 --global-batch 32 --moe-expert-capacity-factor 0.5 --moe-token-dispatcher-type flex
check scale-moe-capacity-dense 2 "--moe-expert-capacity-factor needs an MoE model" -- scale --model llama3-8b --systems dgx-h100:8 --moe-expert-capacity-factor 1 --seq 256
check scale-moe-capacity-bad 2 "--moe-expert-capacity-factor 'x': expected a number above 0" -- scale $FM --systems dgx-h100:32 --ep 32 --moe-expert-capacity-factor x
cf=$("$C" sweep tests/data/sweep/scale-moe-capacity.json -j 2 2>/dev/null)
if printf '%s\n' "$cf" | awk -F, 'NR == 2 { a = $3 } NR == 3 { b = $3 } NR == 4 { c = $3 } END { exit !(a > 0 && a < b && b < c) }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL sweep-moe-capacity: $cf" >&2; fi
# --moe-layer-freq (Megatron-LM's): every N-th layer an MoE layer; without --experts, with a preset, or leaving no
# MoE layer: exit 2
check workload-moe-layer-freq 0 "wrote /dev/null: 8 ranks" -- workload --model custom --layers 8 --hidden 1024 --heads 8 --gated --experts 16 --topk 2 --moe-layer-freq 2 --topo dgx-h100 --gpus 8 --ep 8 -o /dev/null
check workload-moe-layer-freq-dense 2 "describe an MoE model: give --experts" -- workload --model custom --layers 8 --hidden 1024 --heads 8 --moe-layer-freq 2 --topo dgx-h100 --gpus 8 -o /dev/null
check workload-moe-layer-freq-none 2 "leaves none of the 4 layers an MoE layer" -- workload --model custom --layers 4 --hidden 1024 --heads 8 --experts 16 --dense-layers 3 --moe-layer-freq 2 --topo dgx-h100 --gpus 8 -o /dev/null
mf2=$("$C" workload --model custom --layers 8 --hidden 1024 --heads 8 --gated --experts 16 --topk 2 --moe-layer-freq 2 --topo dgx-h100 --gpus 8 --ep 8 -o - 2>/dev/null | grep -c '"moe_experts_fwd"')
if [ "$mf2" = 32 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL workload-moe-layer-freq-ops: $mf2" >&2; fi
# --recompute-granularity / --recompute-modules (Megatron-LM's selective recomputation): the header and the JSON
# record say so; refused (exit 2) with --recompute, modules without selective, an unknown module or granularity,
# mla_up_proj without MLA, moe on a dense model; as a sweep key MLA's up projections, the experts' activation and
# the norms save more memory than the attention kernel alone, and the whole MoE layer more than those
SR="--model custom --layers 4 --hidden 2048 --heads 16 --gated --kv-lora-rank 512 --experts 32 --topk 4 --expert-ffn 1024 --seq 1024 --systems dgx-h100:16 --tp 2 --ep 8 --sp"
check scale-recompute-selective-header 0 "^# scale: custom .*, selective recompute \\(layernorm, mla_up_proj, moe_act\\)" -- scale $SR --recompute-granularity selective --recompute-modules mla_up_proj,moe_act,layernorm
check scale-recompute-selective-json 0 '"recompute_granularity": "selective", "recompute_modules": "core_attn"' -- scale $SR --recompute-granularity selective --format json
check scale-recompute-full-json 0 '"recompute_granularity": "full"' -- scale $SR --recompute-granularity full --format json
check scale-recompute-both 2 "--recompute is --recompute-granularity full; it contradicts selective" -- scale $SR --recompute --recompute-granularity selective
check scale-recompute-modules-alone 2 "--recompute-modules needs --recompute-granularity selective" -- scale $SR --recompute-modules mlp
check scale-recompute-modules-bad 2 "'experts' is not one of them" -- scale $SR --recompute-granularity selective --recompute-modules moe,experts
check scale-recompute-modules-moe-header 0 "^# scale: custom .*, selective recompute \\(moe\\)" -- scale $SR --recompute-granularity selective --recompute-modules moe
check scale-recompute-modules-moe-dense 2 "--recompute-modules moe needs an MoE model" -- scale --model llama3-8b --systems dgx-h100:8 --seq 256 --recompute-granularity selective --recompute-modules moe
check scale-recompute-granularity-bad 2 "--recompute-granularity 'block': expected full or selective" -- scale $SR --recompute-granularity block
check scale-recompute-mla-up-proj-mha 2 "mla_up_proj needs multi-latent attention" -- scale --model llama3-8b --systems dgx-h100:8 --seq 256 --recompute-granularity selective --recompute-modules mla_up_proj
rs=$("$C" sweep tests/data/sweep/scale-recompute-selective.json -j 2 2>/dev/null)
if printf '%s\n' "$rs" | awk -F, 'NR == 2 { a = $(NF - 4) } NR == 3 { b = $(NF - 4) } NR == 5 { c = $(NF - 4) }
                                  END { exit !(a > 0 && b > 0 && b < a && c > 0 && c < b) }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL sweep-recompute-selective: $rs" >&2; fi
# --num-virtual-stages-per-pipeline-rank / --num-layers-per-virtual-pipeline-stage (Megatron-LM's ways of saying
# interleaved:V): the same trace as --schedule; layers that do not split, both flags, a contradicting --schedule, and
# scale's layers-per-stage flag without --pp exit 2
a=$("$C" workload --model llama3-8b --topo dgx-h100 --gpus 16 --tp 2 --pp 4 --num-layers-per-virtual-pipeline-stage 2 -o - 2>/dev/null | cksum)
b=$("$C" workload --model llama3-8b --topo dgx-h100 --gpus 16 --tp 2 --pp 4 --schedule interleaved:4 -o - 2>/dev/null | cksum)
c=$("$C" workload --model llama3-8b --topo dgx-h100 --gpus 16 --tp 2 --pp 4 --num-virtual-stages-per-pipeline-rank 4 -o - 2>/dev/null | cksum)
if [ "$a" = "$b" ] && [ "$b" = "$c" ] && [ "${a%% *}" != "$(printf '' | cksum | cut -d' ' -f1)" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL workload-vpp-flags-same-trace: $a / $b / $c" >&2; fi
check workload-vpp-layers-split 2 "--num-layers-per-virtual-pipeline-stage 3: a stage's 8 layers do not split into chunks of 3" -- workload --model llama3-8b --topo dgx-h100 --gpus 16 --tp 2 --pp 4 --num-layers-per-virtual-pipeline-stage 3 -o /dev/null
check workload-vpp-both 2 "one or the other \(Megatron-LM refuses both\)" -- workload --model llama3-8b --topo dgx-h100 --gpus 16 --tp 2 --pp 4 --num-layers-per-virtual-pipeline-stage 2 --num-virtual-stages-per-pipeline-rank 4 -o /dev/null
check workload-vpp-schedule 2 "--schedule interleaved:4 with 2 model chunks per pp rank from Megatron-LM's flag" -- workload --model llama3-8b --topo dgx-h100 --gpus 16 --tp 2 --pp 4 --num-virtual-stages-per-pipeline-rank 2 --schedule interleaved:4 -o /dev/null
check scale-vpp-layers-no-pp 2 "--num-layers-per-virtual-pipeline-stage fixes the pipeline: give --pp" -- scale --model llama3-8b --systems dgx-h100:16 --num-layers-per-virtual-pipeline-stage 2
check scale-vpp-stages 0 "interleaved 1F1B \(2 model chunks per pp rank\)" -- scale --model llama3-8b --systems dgx-h100:16 --tp 2 --pp 4 --num-virtual-stages-per-pipeline-rank 2
# --megatron-args FILE (Megatron-LM's pretrain_gpt.py arguments from a launch script): DeepSeek-V3's and Llama 3 8B's
# give their presets' weights; a Llama file gives the same step as the options it stands for; options after it
# override it; what it ignores and what is not modelled are named; a missing file exits 2 (bad ones: bad_input/)
check workload-megatron-args-dsv3 0 "^params 671\.026 B \+ 11\.610 B in 1 MTP layer; .*layout 'Et\*3\|\(tt\|\)\*29,m\|L'" -- workload --model custom --megatron-args tests/data/megatron/deepseek-v3.sh --topo dgx-h100 --gpus 1024 -o /dev/null
check workload-megatron-args-notes 0 "deepseek-v3\.sh: note: --moe-router-load-balancing-type \(line 19\) changes the step in a way not modelled here" -- workload --model custom --megatron-args tests/data/megatron/deepseek-v3.sh --topo dgx-h100 --gpus 1024 -o /dev/null
check workload-megatron-args-ignored 0 "llama3-8b\.sh: ignored 3 arguments .*: --normalization --position-embedding-type --nproc_per_node$" -- workload --model custom --megatron-args tests/data/megatron/llama3-8b.sh --topo dgx-h100 --gpus 16 -o /dev/null
check workload-megatron-args-llama 0 "^params 8\.030 B; step: 64 sequences x 8192 tokens" -- workload --model custom --megatron-args tests/data/megatron/llama3-8b.sh --global-batch 64 --topo dgx-h100 --gpus 16 -o /dev/null
a=$("$C" scale --model custom --megatron-args tests/data/megatron/llama3-8b.sh --systems dgx-h100:16 --format json 2>/dev/null | cksum)
b=$("$C" scale --model custom --layers 32 --hidden 4096 --ffn 14336 --heads 32 --kv-heads 8 --gated --vocab 128256 --tp 2 --pp 2 --schedule interleaved:2 --sp --zero 1 --overlap-param-gather --global-batch 32 --seq 8192 --grad-fp32 --recompute-granularity selective --systems dgx-h100:16 --format json 2>/dev/null | cksum)
if [ "$a" = "$b" ] && [ "${a%% *}" != "$(printf '' | cksum | cut -d' ' -f1)" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL scale-megatron-args-same: $a / $b" >&2; fi
mpat=$(mktemp) # Megatron-LM's alternating pattern: --moe-layer-freq 2, four MoE layers of eight
printf -- '--num-layers 8 --hidden-size 1024 --num-attention-heads 8 --num-experts 8\n--moe-layer-freq "([1]*1+[0]*1)*4"\n' > "$mpat"
check workload-megatron-args-moe-pattern 0 '"moe_experts_fwd"' -- workload --model custom --megatron-args "$mpat" --topo dgx-h100 --gpus 8 -o -
ma=$("$C" workload --model custom --megatron-args "$mpat" --topo dgx-h100 --gpus 8 -o - 2>/dev/null | grep -c '"moe_experts_fwd"')
if [ "$ma" = 32 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL workload-megatron-args-moe-pattern-count: $ma" >&2; fi
rm -f "$mpat"
check scale-megatron-args-missing 2 "/nonexistent/args\.sh" -- scale --model custom --megatron-args /nonexistent/args.sh --systems dgx-h100:8
# --no-overlap-grad-reduce (Megatron-LM's default without --overlap-grad-reduce): the header and the JSON record
# say so; refused with --overlap-param-gather (Megatron-LM asserts) and ZeRO-3; a --megatron-args file without
# --overlap-grad-reduce takes it
NO="--model llama3-8b --systems dgx-h100:16 --tp 8 --zero 1 --seq 2048 --global-batch 64"
check scale-no-overlap-grad-header 0 "^# scale: llama3-8b, .*, gradients reduced after the backward" -- scale $NO --no-overlap-grad-reduce
check scale-no-overlap-grad-json 0 '"overlap_grad_reduce": false' -- scale $NO --no-overlap-grad-reduce --format json
check scale-no-overlap-grad-opg 2 "Megatron-LM asserts --overlap-grad-reduce is on" -- scale $NO --no-overlap-grad-reduce --overlap-param-gather
check scale-no-overlap-grad-zero3 2 "reduce-scattered layer by layer" -- scale --model llama3-8b --systems dgx-h100:16 --zero 3 --seq 2048 --no-overlap-grad-reduce
nog=$(mktemp)
printf -- '--num-layers 4 --hidden-size 1024 --num-attention-heads 8 --use-distributed-optimizer\n' > "$nog"
check scale-megatron-args-no-overlap-grad 0 "ZeRO, gradients reduced after the backward" -- scale --model custom --megatron-args "$nog" --systems dgx-h100:8
rm -f "$nog"
# --recompute-method / --recompute-num-layers (Megatron-LM's, full recomputation's): the header and the JSON record
# say so; refused (exit 2) without full recomputation, block without a count, a method not uniform or block; as a
# sweep key, rerunning more of each stage's layers lengthens the step and saves memory
RM="--model llama3-8b --systems dgx-h100:16 --tp 2 --pp 4 --seq 4096 --global-batch 64 --recompute"
check scale-recompute-block-header 0 "^# scale: llama3-8b, .*, full recompute \(block: 4 layers a model chunk\)" -- scale $RM --recompute-method block --recompute-num-layers 4
check scale-recompute-uniform-header 0 "^# scale: llama3-8b, .*, full recompute \(uniform: a checkpoint each 2 layers\)" -- scale $RM --recompute-num-layers 2
check scale-recompute-method-json 0 '"recompute_granularity": "full", "recompute_method": "block", "recompute_num_layers": 4' -- scale $RM --recompute-method block --recompute-num-layers 4 --format json
check scale-recompute-method-selective 2 "are full recomputation's: give --recompute" -- scale --model llama3-8b --systems dgx-h100:8 --seq 256 --recompute-granularity selective --recompute-method uniform
check scale-recompute-method-block-count 2 "--recompute-method block needs --recompute-num-layers" -- scale $RM --recompute-method block
check scale-recompute-method-bad 2 "--recompute-method 'blocks': expected uniform or block" -- scale $RM --recompute-method blocks
check scale-recompute-num-layers-range 2 "--recompute-num-layers in 1..layers \(32\)" -- scale $RM --recompute-num-layers 40
rm_=$("$C" sweep tests/data/sweep/scale-recompute-method.json -j 2 2>/dev/null)
if printf '%s\n' "$rm_" | awk -F, 'NR > 1 { s[NR] = $3; m[NR] = $4 } END { exit !(s[2] > 0 && s[2] < s[3] && s[3] < s[4] && m[2] > m[3] && m[3] > m[4]) }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL sweep-recompute-method: $rm_" >&2; fi
# --fp8-recipe (Megatron-LM's): mxfp8 only on Blackwell, blockwise from Hopper on, any recipe only with fp8
# (exit 2); the header names a recipe other than delayed; tensorwise reduces amaxes over TP before its
# gathers instead of delayed's per-chunk reductions; as a sweep key on B200 delayed is the fastest (its
# GEMMs read one fp8 copy both ways: no transposes, amax passes or block scales)
check scale-fp8-recipe-mxfp8-on-h100 2 "mxfp8 needs Blackwell's block-scaled tensor cores" -- scale --model llama3-8b --systems dgx-h100:8 --tp 8 --dtype fp8 --fp8-recipe mxfp8 --seq 256
check scale-fp8-recipe-blockwise-on-ada 2 "blockwise needs compute capability 9.0" -- scale --model llama3-8b --systems pcie-gen4-8gpu-2socket:8 --tp 8 --pp 1 --dtype fp8 --fp8-recipe blockwise --seq 256
check scale-fp8-recipe-needs-fp8 2 "--fp8-recipe tensorwise needs --dtype fp8" -- scale --model llama3-8b --systems dgx-h100:8 --tp 8 --fp8-recipe tensorwise --seq 256
check scale-fp8-recipe-unknown 2 "--fp8-recipe 'nvfp4': expected delayed, tensorwise, mxfp8 or blockwise" -- scale --model llama3-8b --systems hgx-b200:8 --dtype fp8 --fp8-recipe nvfp4
check scale-fp8-recipe-header 0 "^# scale: llama3-8b, .*, fp8 \\(mxfp8\\), ZeRO" -- scale --model llama3-8b --systems hgx-b200:8 --tp 8 --sp --zero 1 --dtype fp8 --fp8-recipe mxfp8 --seq 256
check scale-json-dtype-recipe 0 '"seq": 256, "micro_batch": 1, "dtype": "fp8", "fp8_recipe": "tensorwise"' -- scale --model llama3-8b --systems dgx-h100:8 --tp 8 --dtype fp8 --fp8-recipe tensorwise --seq 256 --format json
check workload-fp8-recipe-header 0 '8 GPUs = tp 2 x pp 1 x dp 4 x cp 1, ep 1, sp, ZeRO-1, fp8 \(tensorwise, weights gathered in fp8\)$' -- workload --model llama3-8b --gpus 8 --tp 2 --sp --zero 1 --dtype fp8 --fp8-recipe tensorwise --fp8-param-gather --seq 256 --global-batch 8 -o /dev/null
check workload-bf16-header 0 '8 GPUs = tp 2 x pp 1 x dp 4 x cp 1, ep 1, DDP, bf16$' -- workload --model llama3-8b --gpus 8 --tp 2 --seq 256 --global-batch 8 -o /dev/null
check workload-fp8-tensorwise-amax-tp 0 '"name":.?"fp8_amax_tp"' -- workload --model llama3-8b --gpus 8 --tp 2 --sp --dtype fp8 --fp8-recipe tensorwise --seq 256 --global-batch 8 -o -
tw=$("$C" workload --model llama3-8b --gpus 8 --tp 2 --sp --dtype fp8 --fp8-recipe tensorwise --seq 256 --global-batch 8 -o - 2>/dev/null | grep -c 'fp8_amax_fwd')
if [ "$tw" = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL workload-fp8-tensorwise-no-delayed-amax: $tw" >&2; fi
rcp=$("$C" sweep tests/data/sweep/scale-fp8-recipe.json -j 2 2>/dev/null)
if printf '%s\n' "$rcp" | awk -F, 'NR > 1 { t[$2] = $3 } END { exit !(t["delayed"] > 0 && t["delayed"] < t["tensorwise"] && t["delayed"] < t["mxfp8"] && t["blockwise"] > 0) }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL sweep-fp8-recipe: $rcp" >&2; fi
# --cp-comm a2a+p2p with --hierarchical-context-parallel-sizes A,B (Megatron-LM's): the headers name the sizes;
# the sizes must multiply to --cp (or give it), and a2a+p2p needs them; as a sweep key every split runs
check workload-cp-hier-header 0 "16 GPUs = tp 1 x pp 1 x dp 1 x cp 16 \\(a2a\\+p2p 8x2\\), ep 1" -- workload --model llama3-8b --gpus 16 --cp-comm a2a+p2p --hierarchical-context-parallel-sizes 8,2 --seq 16384 -o /dev/null
check scale-cp-hier-header 0 "context parallel 16 \\(a2a\\+p2p 4x4\\)" -- scale --model llama3-8b --systems dgx-h100:16 --tp 1 --cp 16 --cp-comm a2a+p2p --hierarchical-context-parallel-sizes 4,4 --seq 16384
check scale-cp-hier-needs-sizes 2 "a2a\\+p2p needs --hierarchical-context-parallel-sizes A,B" -- scale --model llama3-8b --systems dgx-h100:16 --tp 1 --cp 16 --cp-comm a2a+p2p --seq 16384
check scale-cp-hier-product 2 "A x B = 8, not --cp 16" -- scale --model llama3-8b --systems dgx-h100:16 --tp 1 --cp 16 --cp-comm a2a+p2p --hierarchical-context-parallel-sizes 4,2 --seq 16384
check scale-cp-hier-auto-keeps-cp 0 "context parallel 4 \\(a2a\\+p2p 2x2\\), expert parallel 1$" -- scale --model llama3-8b --systems dgx-h100:16 --seq 16384 --cp-comm a2a+p2p --hierarchical-context-parallel-sizes 2,2 --auto
hcp=$("$C" sweep tests/data/sweep/scale-cp-hierarchical.json -j 2 2>/dev/null)
# (the sizes are a quoted "A,B", so step_ms is the 4th comma field)
if printf '%s\n' "$hcp" | awk -F, 'NR > 1 && $4 > 0 { n++ } END { exit !(n == 3) }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL sweep-cp-hierarchical: $hcp" >&2; fi
# --attention-backend (Megatron-LM's): flash (and its aliases fused, auto) skips the causal mask's tiles, unfused
# (local) computes the full product; the headers and the JSON record say which; an unknown name exits 2 (on the
# command line and in a --megatron-args file, with its line); --use-flash-attn is flash; as a sweep key flash is
# the faster at both lengths and gains more at the longer one (the product grows as s^2, the rest as s)
AB="--model llama3-8b --systems dgx-h100:8 --tp 8 --seq 1024 --global-batch 1"
check scale-attn-backend-header 0 "^# scale: llama3-8b, .*, unfused attention \\(the full s x s product\\)" -- scale $AB --attention-backend local
check scale-attn-backend-json 0 '"dtype": "bf16", "attention_backend": "unfused"' -- scale $AB --attention-backend unfused --format json
check scale-attn-backend-json-fused 0 '"attention_backend": "flash"' -- scale $AB --attention-backend fused --format json
check scale-attn-backend-bad 2 "--attention-backend 'sdpa': expected flash, fused or auto" -- scale $AB --attention-backend sdpa
check scale-attn-backend-unfused-cp 2 "Megatron-LM runs context parallelism only in Transformer Engine's attention" -- scale --model llama3-8b --systems dgx-h100:8 --tp 4 --cp 2 --seq 1024 --global-batch 1 --attention-backend unfused
check workload-attn-backend-header 0 "^workload llama3-8b on dgx-h100 .*, bf16, unfused attention$" -- workload --model llama3-8b --topo dgx-h100 --gpus 8 --tp 8 --seq 1024 --attention-backend unfused -o /dev/null
ab=$(mktemp)
printf -- '--num-layers 2 --hidden-size 1024 --num-attention-heads 8 --attention-backend unfused\n' > "$ab"
check scale-megatron-args-attn-backend 0 "unfused attention" -- scale --model custom --megatron-args "$ab" --systems dgx-h100:8
printf -- '--num-layers 2 --hidden-size 1024 --num-attention-heads 8 --use-flash-attn\n' > "$ab"
check scale-megatron-args-flash-attn 0 '"attention_backend": "flash"' -- scale --model custom --megatron-args "$ab" --systems dgx-h100:8 --attention-backend unfused --megatron-args "$ab" --format json
rm -f "$ab"
abs=$("$C" sweep tests/data/sweep/scale-attention-backend.json -j 2 2>/dev/null)
if printf '%s\n' "$abs" | awk -F, 'NR > 1 { t[$2 "," $3] = $4 }
        END { a = t["4096,flash"] / t["4096,unfused"]; b = t["16384,flash"] / t["16384,unfused"]
              exit !(t["4096,flash"] > 0 && a < 1 && b < a) }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL sweep-attention-backend: $abs" >&2; fi
# --moe-layer-freq as Megatron-LM's list (each layer's kind): a list that says what an integer (and --dense-layers)
# says writes the same trace; odd layers MoE (Llama 4's interleaving, which no D/N gives) as many MoE ops as
# --moe-layer-freq 2; a --megatron-args file with it is taken; a bad list exits 2 with the character's place, a
# list of the wrong length with both lengths
ML="--model custom --layers 8 --hidden 1024 --heads 8 --gated --experts 16 --topk 2 --topo dgx-h100 --gpus 8 --ep 8"
a=$("$C" workload $ML --moe-layer-freq 2 -o - 2>/dev/null | cksum)
b=$("$C" workload $ML --moe-layer-freq '([1]+[0])*4' -o - 2>/dev/null | cksum)
c=$("$C" workload $ML --dense-layers 3 -o - 2>/dev/null | cksum)
d=$("$C" workload $ML --moe-layer-freq '[0, 0, 0] + [1] * 5' -o - 2>/dev/null | cksum)
if [ "$a" = "$b" ] && [ "$c" = "$d" ] && [ "$a" != "$c" ] && [ "${a%% *}" != "$(printf '' | cksum | cut -d' ' -f1)" ]; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL workload-moe-pattern-same: $a / $b, $c / $d" >&2; fi
mo=$("$C" workload $ML --moe-layer-freq '([0]+[1])*4' -o - 2>/dev/null | grep -c '"moe_experts_fwd"')
if [ "$mo" = 32 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL workload-moe-pattern-odd: $mo" >&2; fi
check workload-moe-pattern-bad 2 "--moe-layer-freq '\[1,2\]\*4': expected 0 \(dense\) or 1 \(MoE\) at character 4" -- workload $ML --moe-layer-freq '[1,2]*4' -o /dev/null
check workload-moe-pattern-length 2 "pattern has 6 layers, the model 8" -- workload $ML --moe-layer-freq '([0]+[1])*3' -o /dev/null
check workload-moe-pattern-dense 2 "takes no --dense-layers" -- workload $ML --moe-layer-freq '([0]+[1])*4' --dense-layers 2 -o /dev/null
check scale-moe-pattern-preset 2 "describe a custom MoE model" -- scale --model mixtral-8x7b --systems dgx-h100:8 --moe-layer-freq '([0]+[1])*16'
# --overlap-moe-expert-parallel-comm (Megatron-LM's combined 1F1B): the header and the JSON record say so; its
# all-to-alls leave the main stream; Megatron-LM's refusals exit 2 (pp > 1 without interleaving, EP 1, the
# shared expert's overlap); a --megatron-args file with it is taken (no "not modelled" note); as a sweep key the
# step is shorter and less of it exposed at 4 and 16 microbatches, and the memory higher (one more in flight)
EO="--model custom --layers 4 --hidden 1024 --heads 8 --gated --experts 16 --topk 2 --shared-ffn 1024 --seq 1024 --global-batch 32"
check scale-ep-overlap-header 0 "^# scale: custom, .*, combined 1F1B \\(all-to-alls beside the paired microbatch's compute\\)" -- scale $EO --systems dgx-h100:8 --ep 8 --overlap-moe-expert-parallel-comm
check scale-ep-overlap-json 0 '"overlap_moe_expert_parallel_comm": true' -- scale $EO --systems dgx-h100:8 --ep 8 --overlap-moe-expert-parallel-comm --format json
# (8 ranks x 4 layers x 4 microbatches, the first forward's alone on the main stream: 96 of 128 off it)
eo=$("$C" workload $EO --topo dgx-h100 --gpus 8 --ep 8 --overlap-moe-expert-parallel-comm -o - 2>/dev/null |
     awk '/"name":.*"ep_dispatch"/ { d = 1; n++; next } d && /"stream":/ { if ($2 + 0 != 0) off++; d = 0 } END { print off + 0 "/" n + 0 }')
if [ "$eo" = 96/128 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL workload-ep-overlap-dispatches: $eo" >&2; fi
check workload-ep-overlap-header 0 "microbatches of 1 per pipeline, combined 1F1B \\(forward and backward paired by layer, the all-to-alls beside the other's compute, weight gradients delayed\\)$" -- workload $EO --topo dgx-h100 --gpus 8 --ep 8 --overlap-moe-expert-parallel-comm --delay-wgrad-compute -o /dev/null
# full recomputation: the rerun layers' all-to-alls off the main stream as well (8 ranks x 4 layers x 3 paired
# steps x 6); under fp8's delayed scaling exit 2 (Megatron-LM's rule)
eor=$("$C" workload $EO --topo dgx-h100 --gpus 8 --ep 8 --recompute --overlap-moe-expert-parallel-comm -o - 2>/dev/null |
     awk '/"name":.*"ep_/ { d = 1; next } d && /"stream":/ { if ($2 + 0 != 0) off++; d = 0 } END { print off + 0 }')
if [ "$eor" = 576 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL workload-ep-overlap-recompute: $eor" >&2; fi
check workload-ep-overlap-recompute-fp8 2 "full recomputation under fp8's delayed scaling: Megatron-LM refuses it" -- workload $EO --topo dgx-h100 --gpus 8 --ep 8 --recompute --dtype fp8 --overlap-moe-expert-parallel-comm -o /dev/null
check workload-ep-overlap-pp 2 "needs the interleaved schedule" -- workload $EO --topo dgx-h100 --gpus 8 --ep 4 --pp 2 --overlap-moe-expert-parallel-comm -o /dev/null
check workload-ep-overlap-ep1 2 "needs an MoE model and --ep above 1" -- workload $EO --topo dgx-h100 --gpus 8 --overlap-moe-expert-parallel-comm -o /dev/null
check workload-ep-overlap-shared 2 "Megatron-LM asserts the shared expert's overlap off" -- workload $EO --topo dgx-h100 --gpus 8 --ep 8 --moe-shared-expert-overlap --overlap-moe-expert-parallel-comm -o /dev/null
# --delay-wgrad-compute (with it): said in the header and the JSON record; the step not longer at the sweep's
# DeepSeek-style shape across two servers (the weight gradients beside the all-to-alls; at h 1,024 with 2
# experts a rank it is longer, as Megatron-LM's guide warns it can be); without the overlap, or with
# --tp-comm-overlap, exit 2
check scale-delay-wgrad-header 0 "combined 1F1B \\(all-to-alls beside the paired microbatch's compute, weight gradients delayed\\)" -- scale $EO --systems dgx-h100:8 --ep 8 --overlap-moe-expert-parallel-comm --delay-wgrad-compute
check scale-delay-wgrad-json 0 '"overlap_moe_expert_parallel_comm": true, "delay_wgrad_compute": true' -- scale $EO --systems dgx-h100:8 --ep 8 --overlap-moe-expert-parallel-comm --delay-wgrad-compute --format json
DW="--model custom --layers 4 --hidden 2048 --heads 16 --gated --experts 64 --topk 6 --expert-ffn 1408 --shared-ffn 2816 --seq 4096 --global-batch 64 --systems dgx-h100:ib-ndr:16 --ep 16 --overlap-moe-expert-parallel-comm --format csv"
dw0=$("$C" scale $DW 2>/dev/null | awk -F, 'NR == 2 { print $9 }')
dw1=$("$C" scale $DW --delay-wgrad-compute 2>/dev/null | awk -F, 'NR == 2 { print $9 }')
if awk -v a="$dw0" -v b="$dw1" 'BEGIN { exit !(a > 0 && b > 0 && b <= a) }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL scale-delay-wgrad-not-longer: $dw0 -> $dw1" >&2; fi
check workload-delay-wgrad-alone 2 "needs --overlap-moe-expert-parallel-comm" -- workload $EO --topo dgx-h100 --gpus 8 --ep 8 --delay-wgrad-compute -o /dev/null
check workload-delay-wgrad-tpo 2 "--delay-wgrad-compute with --tp-comm-overlap: not modelled" -- workload $EO --topo dgx-h100 --gpus 8 --ep 4 --tp 2 --sp --tp-comm-overlap --overlap-moe-expert-parallel-comm --delay-wgrad-compute -o /dev/null
# --auto with EP searched: options that need EP above 1 (combined 1F1B, flex) no longer fail on the layout
# rule's EP 1 before the search (until 2026-12-03 they exited 2); the search picks an EP above 1; a dense model
# still exits 2
AE="--model custom --layers 4 --hidden 1024 --heads 8 --gated --experts 16 --topk 2 --seq 1024 --global-batch 32 --systems dgx-h100:16 --auto"
check scale-auto-ep-overlap 0 "^# dgx-h100 16 GPUs: fastest of [0-9]+ layouts? that fit \\(--auto\\): ep (2|4|8|16)$" -- scale $AE --overlap-moe-expert-parallel-comm
check scale-auto-flex 0 "^# dgx-h100 16 GPUs: fastest of [0-9]+ layouts? that fit \\(--auto\\): ep (2|4|8|16)$" -- scale $AE --moe-token-dispatcher-type flex
check scale-auto-ep-overlap-dense 2 "needs an MoE model and --ep above 1" -- scale --model llama3-8b --systems dgx-h100:16 --auto --overlap-moe-expert-parallel-comm
eoa=$(mktemp)
printf -- '--num-layers 4 --hidden-size 1024 --num-attention-heads 8 --num-experts 16 --moe-router-topk 2\n--expert-model-parallel-size 8 --overlap-moe-expert-parallel-comm --delay-wgrad-compute\n' > "$eoa"
check scale-megatron-args-ep-overlap 0 '"overlap_moe_expert_parallel_comm": true, "delay_wgrad_compute": true' -- scale --model custom --megatron-args "$eoa" --systems dgx-h100:8 --format json
if "$C" scale --model custom --megatron-args "$eoa" --systems dgx-h100:8 2>&1 >/dev/null | grep -qE "overlap-moe-expert-parallel-comm|delay-wgrad"; then
    fail=$((fail + 1)); echo "FAIL scale-megatron-args-ep-overlap-note: still named as not modelled" >&2; else pass=$((pass + 1)); fi
rm -f "$eoa"
eos=$("$C" sweep tests/data/sweep/scale-ep-overlap.json -j 2 2>/dev/null)
if printf '%s\n' "$eos" | awk -F, 'NR > 1 { t[$2 "," $3] = $4; x[$2 "," $3] = $5; m[$2 "," $3] = $6 }
        END { ok = t["64,off"] > 0
              for (b = 64; b <= 256; b *= 4)
                  ok = ok && t[b ",on"] < t[b ",off"] && x[b ",on"] < x[b ",off"] && m[b ",on"] > m[b ",off"]
              exit !ok }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL sweep-ep-overlap: $eos" >&2; fi
mpo=$(mktemp)
printf -- '--num-layers 8 --hidden-size 1024 --num-attention-heads 8 --num-experts 8\n--moe-layer-freq "([0]*1+[1]*1)*4"\n' > "$mpo"
mo=$("$C" workload --model custom --megatron-args "$mpo" --topo dgx-h100 --gpus 8 -o - 2>/dev/null | grep -c '"moe_experts_fwd"')
if [ "$mo" = 32 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL workload-megatron-args-moe-odd: $mo" >&2; fi
rm -f "$mpo"
mps=$("$C" sweep tests/data/sweep/scale-moe-pattern.json -j 2 2>/dev/null)
if printf '%s\n' "$mps" | awk -F, 'NR > 1 { s[NR] = $3 } END { exit !(s[2] > 0 && s[3] > 0 && s[4] > 0 && s[3] != s[4]) }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL sweep-moe-pattern: $mps" >&2; fi
# --kv-channels (Megatron-LM's): heads of their own width; Qwen3-235B-A22B's arguments (128-wide heads at
# hidden 4,096 over 64 heads) give its published 235 B parameters (231.742 B with heads hidden / heads wide,
# before); a width of hidden / heads writes the trace without it; custom only; refused with MLA
check workload-megatron-args-qwen3 0 "^params 235\.094 B; " -- workload --model custom --megatron-args tests/data/megatron/qwen3-235b-a22b.sh --topo dgx-h100 --gpus 64 --ep 64 --global-batch 64 -o /dev/null
KC="--model custom --layers 4 --hidden 4096 --heads 32 --kv-heads 8 --gated --topo dgx-h100 --gpus 8 --tp 8 --seq 1024"
a=$("$C" workload $KC -o - 2>/dev/null | cksum)
b=$("$C" workload $KC --kv-channels 128 -o - 2>/dev/null | cksum)
c=$("$C" workload $KC --kv-channels 256 -o - 2>/dev/null | cksum)
if [ "$a" = "$b" ] && [ "$a" != "$c" ] && [ "${a%% *}" != "$(printf '' | cksum | cut -d' ' -f1)" ]; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL workload-kv-channels-same: $a / $b / $c" >&2; fi
check workload-kv-channels-params 0 "^params 1\.560 B" -- workload $KC --kv-channels 256 -o /dev/null
check workload-kv-channels-preset 2 "--kv-channels, --ffn, --vocab, --gated, --window-size, --attention-chunk-size and --window-attn-skip-freq describe --model custom" -- workload --model llama3-8b --kv-channels 128 --topo dgx-h100 --gpus 8 -o /dev/null
check workload-kv-channels-mla 2 "--kv-channels with multi-latent attention" -- workload --model custom --layers 2 --hidden 2048 --heads 16 --kv-lora-rank 512 --kv-channels 128 --topo dgx-h100 --gpus 8 -o /dev/null
# Sliding-window attention (Megatron-LM's --window-size W,0 and --window-attn-skip-freq): the presets that
# have one say so and count their published parameters; gpt-oss-20b's Megatron-LM arguments write the
# preset's trace byte for byte; a window shortens a long-sequence step, a window of the whole sequence
# is full attention; the p2p CP ring refuses it, a2a takes it; custom only; the sweep key
check workload-window-gpt-oss 0 "^workload gpt-oss-120b \(sliding window 128 in 18 of 36 layers\) on dgx-h100" -- workload --model gpt-oss-120b --topo dgx-h100 --gpus 16 --ep 16 --zero 1 --seq 1024 --global-batch 16 -o /dev/null
check workload-window-mistral 0 "^workload mistral-7b \(sliding window 4096\) on " -- workload --model mistral-7b --topo dgx-h100 --gpus 8 --tp 8 -o /dev/null
check workload-list-gpt-oss 0 "^gpt-oss-120b +36 +2880 +64 +8 +2880 +201088 +128 top-4 +116\.8 " -- workload --model list
check workload-list-gpt-oss-20b 0 "^gpt-oss-20b +24 +2880 +64 +8 +2880 +201088 +32 top-4 +20\.9 " -- workload --model list
check workload-list-qwen3 0 "^qwen3-235b-a22b +94 +4096 +64 +4 +12288 +151936 +128 top-8 +235\.1 " -- workload --model list
check workload-list-qwen3-30b 0 "^qwen3-30b-a3b +48 +2048 +32 +4 +6144 +151936 +128 top-8 +30\.5 " -- workload --model list
check workload-list-mistral 0 "^mistral-7b +32 +4096 +32 +8 +14336 +32000 +- +7\.2 " -- workload --model list
check workload-list-kimi 0 "^kimi-k2 +61 +7168 +64 +64 +18432 +163840 +384 top-8 +1026\.4 " -- workload --model list
GO="--topo dgx-h100 --gpus 8 -o -"
a=$("$C" workload --model custom --megatron-args tests/data/megatron/gpt-oss-20b.sh $GO 2>/dev/null | cksum)
b=$("$C" workload --model gpt-oss-20b --ep 8 --seq 4096 --micro-batch 1 --global-batch 8 --zero 1 --grad-fp32 $GO 2>/dev/null | cksum)
if [ "$a" = "$b" ] && [ "${a%% *}" != "$(printf '' | cksum | cut -d' ' -f1)" ]; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL workload-megatron-args-gpt-oss: $a / $b" >&2; fi
check workload-megatron-args-gpt-oss-params 0 "^params 20\.908 B; " -- workload --model custom --megatron-args tests/data/megatron/gpt-oss-20b.sh --topo dgx-h100 --gpus 8 -o /dev/null
WC="--model custom --layers 8 --hidden 2048 --heads 16 --kv-heads 4 --gated --systems dgx-h100:ib-ndr --gpus 8 --tp 2 --seq 16384 --global-batch 4 --format json"
wst() { "$C" scale $WC "$@" 2>/dev/null | sed -n 's/.*"step_time_s": \([0-9.e-]*\),.*/\1/p'; }
full=$(wst); w1k=$(wst --window-size 1024); w1k4=$(wst --window-size 1024 --window-attn-skip-freq 4)
wall=$(wst --window-size 16384,0); wlist=$(wst --window-size 1024 --window-attn-skip-freq "([1]*3+[0])*2")
if awk -v f="$full" -v a="$w1k" -v b="$w1k4" -v c="$wall" -v d="$wlist" \
    'BEGIN { exit !(f > 0 && a > 0 && a < b && b < f && c == f && d == b) }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL scale-window-steps: $full $w1k $w1k4 $wall $wlist" >&2; fi
check workload-window-cp-p2p 2 "needs --cp-comm a2a or allgather" -- workload --model gpt-oss-20b --topo dgx-h100 --gpus 16 --ep 8 --cp 2 --seq 8192 -o /dev/null
check workload-window-cp-a2a 0 "cp 2 \(a2a\), ep 8" -- workload --model gpt-oss-20b --topo dgx-h100 --gpus 16 --ep 8 --cp 2 --cp-comm a2a --seq 8192 --zero 1 -o /dev/null
check workload-window-preset 2 "--window-size, --attention-chunk-size and --window-attn-skip-freq describe --model custom" -- workload --model llama3-8b --window-size 4096 --topo dgx-h100 --gpus 8 -o /dev/null
check workload-window-right 2 "--window-size '128,4': the right extent must be 0" -- workload --model custom --layers 4 --hidden 1024 --heads 8 --window-size 128,4 --topo dgx-h100 --gpus 8 -o /dev/null
check workload-window-freq-alone 2 "give --window-size or --attention-chunk-size too" -- workload --model custom --layers 4 --hidden 1024 --heads 8 --window-attn-skip-freq 2 --topo dgx-h100 --gpus 8 -o /dev/null
check workload-window-freq-list 2 "pattern has 3 layers, the model 4" -- workload --model custom --layers 4 --hidden 1024 --heads 8 --window-size 64 --window-attn-skip-freq "[1,0,1]" --topo dgx-h100 --gpus 8 -o /dev/null
sw=$("$C" sweep tests/data/sweep/scale-window.json -j 2 2>/dev/null)
if printf '%s\n' "$sw" | awk -F, 'NR > 1 { s[NR] = $3 } END { exit !(NR == 4 && s[2] > 0 && s[2] < s[3] && s[3] < s[4]) }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL sweep-window: $sw" >&2; fi
# --moe-load-imbalance F: the busiest EP rank of a layer receives F x the mean tokens; the header says so;
# the written trace carries the all-to-alls' weights ("alltoall_weights", a root on each EP all-to-all)
# and replays longer than the balanced one; scale's step grows with F; the sweep key; refusals
MI="--model custom --layers 4 --hidden 1024 --heads 8 --gated --experts 16 --topk 2 --topo dgx-h100 --gpus 8 --ep 8 --seq 1024 --global-batch 8"
check workload-imbalance-header 0 "ep 8, busiest EP rank 2x the mean tokens, DDP" -- workload $MI --moe-load-imbalance 2 -o /dev/null
mid=$(mktemp -d)
"$C" workload $MI --moe-load-imbalance 2 -o "$mid/u.json" >/dev/null 2>&1
"$C" workload $MI -o "$mid/b.json" >/dev/null 2>&1
mis() { "$C" replay --topo dgx-h100 "$1" --format json 2>/dev/null | sed -n 's/^{"step_time_s": \([0-9.e-]*\),.*/\1/p'; }
mu=$(mis "$mid/u.json"); mb=$(mis "$mid/b.json")
if grep -q '"alltoall_weights"' "$mid/u.json" && grep -q '"root":	-' "$mid/u.json" && ! grep -q '"alltoall_weights"' "$mid/b.json" &&
    awk -v u="$mu" -v b="$mb" 'BEGIN { exit !(b > 0 && u > 1.1 * b) }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL workload-imbalance-trace: $mu $mb" >&2; fi
rm -rf "$mid"
MS="--model custom --layers 8 --hidden 2048 --heads 16 --gated --experts 64 --topk 6 --expert-ffn 1408 --systems dgx-h100:ib-ndr --gpus 16 --ep 16 --seq 4096 --global-batch 64 --format json"
mst() { "$C" scale $MS "$@" 2>/dev/null | sed -n 's/.*"step_time_s": \([0-9.e-]*\),.*/\1/p'; }
m1=$(mst); m15=$(mst --moe-load-imbalance 1.5); m2=$(mst --moe-load-imbalance 2); m1x=$(mst --moe-load-imbalance 1)
if awk -v a="$m1" -v b="$m15" -v c="$m2" -v d="$m1x" 'BEGIN { exit !(a > 0 && a < b && b < c && a == d) }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL scale-imbalance-steps: $m1 $m15 $m2 $m1x" >&2; fi
check scale-imbalance-json 0 '"moe_load_imbalance": 1.5' -- scale $MS --moe-load-imbalance 1.5
check workload-imbalance-above-ep 2 "--moe-load-imbalance must be in 1..ep \(8\)" -- workload $MI --moe-load-imbalance 9 -o /dev/null
check workload-imbalance-flex 2 "with --moe-token-dispatcher-type flex" -- workload $MI --moe-load-imbalance 2 --moe-token-dispatcher-type flex -o /dev/null
check workload-imbalance-value 2 "--moe-load-imbalance 'x2': expected a number from 1" -- workload $MI --moe-load-imbalance x2 -o /dev/null
check workload-imbalance-dense 2 "needs an MoE model" -- workload --model llama3-8b --topo dgx-h100 --gpus 8 --moe-load-imbalance 2 -o /dev/null
swi=$("$C" sweep tests/data/sweep/scale-moe-imbalance.json -j 2 2>/dev/null)
if printf '%s\n' "$swi" | awk -F, 'NR > 1 { s[NR] = $3 } END { exit !(NR == 5 && s[2] > 0 && s[2] < s[3] && s[3] < s[4] && s[4] < s[5]) }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL sweep-moe-imbalance: $swi" >&2; fi
# Chunked attention (Llama 4's attention_chunk_size, --attention-chunk-size): the presets say so and count
# their parameters (text model only); chunks shorten a long sequence's step, a chunk of the whole
# sequence is full attention; the p2p CP ring refuses it; the scale JSON names it
check workload-chunk-maverick 0 "^workload llama4-maverick \(chunked attention 8192 in 36 of 48 layers\) on " -- workload --model llama4-maverick --topo gb200-nvl72 --gpus 64 --ep 64 --zero 1 --seq 8192 --global-batch 64 -o /dev/null
check workload-list-llama4-scout 0 "^llama4-scout +48 +5120 +40 +8 +16384 +202048 +16 top-1 +107\.8 " -- workload --model list
check workload-list-llama4-maverick 0 "^llama4-maverick +48 +5120 +40 +8 +16384 +202048 +128 top-1 +400\.7 " -- workload --model list
cfull=$(wst); c4k=$(wst --attention-chunk-size 4096); c4k4=$(wst --attention-chunk-size 4096 --window-attn-skip-freq 4); call=$(wst --attention-chunk-size 16384)
if awk -v f="$cfull" -v a="$c4k" -v b="$c4k4" -v c="$call" 'BEGIN { exit !(f > 0 && a < b && b < f && c == f) }'; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL scale-chunk-steps: $cfull $c4k $c4k4 $call" >&2; fi
check scale-chunk-json 0 '"attention_chunk_size": 4096, "window_attn_skip_freq": 4' -- scale $WC --attention-chunk-size 4096 --window-attn-skip-freq 4
check workload-chunk-cp-p2p 2 "chunked attention \(--attention-chunk-size 8192\) with context parallelism needs --cp-comm a2a" -- workload --model llama4-scout --topo dgx-h100 --gpus 32 --ep 16 --cp 2 --seq 16384 --zero 1 -o /dev/null
check workload-chunk-and-window 2 "a layer's attention is one or the other" -- workload --model custom --layers 4 --hidden 1024 --heads 8 --window-size 128 --attention-chunk-size 512 --topo dgx-h100 --gpus 8 -o /dev/null
