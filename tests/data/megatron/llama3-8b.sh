# Llama 3 8B's shape as Megatron-LM arguments (one or more a line, a bash array, continuations)
GPT_MODEL_ARGS=(
    --num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336
    --num-attention-heads 32 --group-query-attention --num-query-groups 8
    --kv-channels 128
    --swiglu --untie-embeddings-and-output-weights --normalization RMSNorm
    --position-embedding-type rope --padded-vocab-size 128256
)
torchrun --nproc_per_node 8 pretrain_gpt.py \
    "${GPT_MODEL_ARGS[@]}" \
    --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 \
    --num-layers-per-virtual-pipeline-stage 8 \
    --sequence-parallel --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --micro-batch-size 1 --global-batch-size 32 --seq-length 8192 \
    --bf16 --recompute-activations
