# gpt-oss-20b's shape as Megatron-LM pretrain_gpt.py arguments (written for conveyor's tests from the
# model's Hugging Face config.json, openai/gpt-oss-20b: num_hidden_layers 24, hidden_size 2880,
# intermediate_size 2880, num_attention_heads 64, num_key_value_heads 8, head_dim 64, num_local_experts 32,
# num_experts_per_tok 4, vocab_size 201088, sliding_window 128 on the layers its layer_types mark
# "sliding_attention": every other one from the first). Megatron-LM's forms: --window-size 128,0 (a query
# sees itself and the 128 tokens before it) and --window-attn-skip-freq 2 (layers 2, 4, ... counted from 1
# attend fully). Its attention sinks (--softmax-type learnable) are not modelled.
MODEL_ARGS=(
    --num-layers 24 --hidden-size 2880 --ffn-hidden-size 2880 --num-attention-heads 64
    --group-query-attention --num-query-groups 8 --kv-channels 64
    --num-experts 32 --moe-router-topk 4 --moe-ffn-hidden-size 2880 --moe-grouped-gemm
    --swiglu --untie-embeddings-and-output-weights --padded-vocab-size 201088
    --window-size 128,0 --window-attn-skip-freq 2 --softmax-type learnable
    --normalization RMSNorm --position-embedding-type rope
)
torchrun --nproc_per_node 8 pretrain_gpt.py "${MODEL_ARGS[@]}" \
    --expert-model-parallel-size 8 --seq-length 4096 --micro-batch-size 1 --global-batch-size 8 \
    --bf16 --use-distributed-optimizer --overlap-grad-reduce --use-flash-attn
