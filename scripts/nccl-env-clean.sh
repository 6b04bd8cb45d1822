# scripts/nccl-env-clean.sh - sourced by the test, validation and study
# scripts: NCCL's variables that conveyor reads (models/nccl_env.c,
# coll_nccl_vars) would change its answers, so a run starts without them.
unset NCCL_ALGO NCCL_PROTO NCCL_COLLNET_ENABLE NCCL_NVLS_ENABLE NCCL_MIN_NCHANNELS NCCL_MAX_NCHANNELS \
      NCCL_MIN_NRINGS NCCL_MAX_NRINGS NCCL_MIN_CTAS NCCL_MAX_CTAS NCCL_BUFFSIZE NCCL_DEBUG \
      NCCL_P2P_DISABLE NCCL_P2P_LEVEL
