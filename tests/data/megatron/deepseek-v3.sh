#!/bin/bash
# DeepSeek-V3 on 1,024 GPUs (from a Megatron-LM recipe)
MODEL_ARGS=(
    --num-layers 61
    --hidden-size 7168
    --ffn-hidden-size 18432
    --num-attention-heads 128
    --multi-latent-attention
    --kv-lora-rank 512 --q-lora-rank 1536
    --qk-head-dim 128 --qk-pos-emb-head-dim 64 --v-head-dim 128
    --swiglu --untie-embeddings-and-output-weights
    --padded-vocab-size 129280
    --num-experts 256 --moe-router-topk 8 --moe-ffn-hidden-size 2048
    --moe-shared-expert-intermediate-size 2048
    --moe-layer-freq "([0]*3+[1]*58)"
    --moe-router-num-groups 8 --moe-router-group-topk 4
    --moe-token-dispatcher-type flex
    --mtp-num-layers 1
    --moe-router-load-balancing-type seq_aux_loss
)
PARALLEL_ARGS=(
    --tensor-model-parallel-size 1 --pipeline-model-parallel-size 16
    --expert-model-parallel-size 64
    --pipeline-model-parallel-layout "Et*3|(tt|)*29,m|L"
    --use-distributed-optimizer --overlap-grad-reduce
    --sequence-parallel
)
TRAINING_ARGS=(
    --micro-batch-size 1 --global-batch-size 1024 --seq-length 4096
    --lr 1e-4 --min-lr 1e-5 --train-iters 1000  # schedule
    --bf16
    --recompute-granularity full --recompute-method uniform --recompute-num-layers 1
    --data-path /data/x_text_document
)
torchrun --nproc_per_node 8 pretrain_gpt.py ${MODEL_ARGS[@]} ${PARALLEL_ARGS[@]} ${TRAINING_ARGS[@]}
