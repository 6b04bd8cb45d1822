# Qwen3-235B-A22B's shape as Megatron-LM pretrain_gpt.py arguments (written for conveyor's tests from the
# model's Hugging Face config.json, Qwen/Qwen3-235B-A22B: hidden_size 4096, intermediate_size 12288,
# moe_intermediate_size 1536, num_attention_heads 64, num_key_value_heads 4, head_dim 128,
# num_hidden_layers 94, num_experts 128, num_experts_per_tok 8, vocab_size 151936, untied embeddings;
# its model card: 235B parameters in total). The heads are 128 wide at hidden 4,096 over 64 heads:
# --kv-channels, not hidden / heads.
MODEL_ARGS=(
    --num-layers 94 --hidden-size 4096 --ffn-hidden-size 12288 --num-attention-heads 64
    --group-query-attention --num-query-groups 4 --kv-channels 128 --qk-layernorm
    --num-experts 128 --moe-router-topk 8 --moe-ffn-hidden-size 1536
    --swiglu --untie-embeddings-and-output-weights --padded-vocab-size 151936
    --seq-length 4096 --normalization RMSNorm --position-embedding-type rope
)
