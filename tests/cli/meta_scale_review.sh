# tests/cli/meta_scale_review.sh - sourced by cases.sh (inside run.sh: $C, check): regressions
# found by the metamorphic review of the workload generator and `scale` (scripts/meta_scale.sh).

# an untied model (Llama) at pp 1 holds its input embedding and its LM head: 8.03 B parameters x
# 16 bytes = 119.7 GiB under DDP (the LM head was left out: 111.9 GiB)
check wl-untied-head-pp1-memory 0 "memory estimate of the busiest GPU 119\.7 GiB" -- workload --model llama3-8b --tp 1 --seq 8 --global-batch 1 -o /dev/null
# full recompute under sequence parallelism keeps 2sbh/t per layer (Korthikanti et al. 2022 Table 2),
# not 2sbh: Llama 3 70B, s 8192, TP 8, PP 4 (43.8 GiB before, as without --sp)
check wl-sp-recompute-memory 0 "memory estimate of the busiest GPU 35\.1 GiB" -- workload --model llama3-70b --tp 8 --pp 4 --seq 8192 --recompute --sp -o /dev/null
