/* cli/wlopts.h - the options `conveyor workload` and `conveyor scale`
 * share: the model (preset or custom shape), the parallel layout, the
 * training settings, and the GPU compute model with its gpu.* overrides. */
#ifndef CLI_WLOPTS_H
#define CLI_WLOPTS_H

#include <stdio.h>
#include <glib.h>

#include "models/compute.h"
#include "topologies/topo.h"
#include "traces/workload.h"

typedef struct {
    char *model, *schedule, *dtype, *zero_s, *bucket, *topo, *fabric, *reuse, *cp_comm, *hier_cp, *fp8_recipe,
        *moe_dispatcher, *capacity, *imbalance, *rc_gran, *rc_modules, *pp_layout, *rc_method, *attn_backend;
    char **sets;                 /* --set: gpu.* for the compute model, the rest for the topology */
    gint gpus, tp, pp, dp, cp, ep, etp, micro_batch, global_batch, seq, layer_fuse;
    gint layers, hidden, heads, kv_heads, ffn, vocab, experts, topk, expert_ffn, shared_ffn, dense_layers;
    gint router_groups, router_group_topk;
    gint q_lora, kv_lora, qk_dim, rope_dim, v_dim; /* custom: multi-latent attention's widths */
    gint mtp;                    /* --mtp-num-layers */
    gint kv_channels;            /* custom: --kv-channels (a head's width) */
    gint moe_freq;               /* custom MoE: --moe-layer-freq N */
    const char *moe_pattern;     /* custom MoE: --moe-layer-freq as a list (interned '0'/'1' string), or NULL */
    gint window;                 /* custom: --window-size W[,0] (a sliding window's keys before the query) */
    gint chunk;                  /* custom: --attention-chunk-size C (chunked attention) */
    gint window_freq;            /* custom: --window-attn-skip-freq N */
    const char *window_pattern;  /* ... or its list (interned '0'/'1' string, 1 windowed), or NULL */
    gint first_stage_layers, last_stage_layers; /* --decoder-first/last-pipeline-num-layers */
    gint rc_layers;              /* --recompute-num-layers */
    gint vstages, vstage_layers; /* --num-virtual-stages-per-pipeline-rank, --num-layers-per-virtual-pipeline-stage */
    gboolean sp, fsdp, zero3_per_param, recompute, grad_fp32, gated, overlap_param_gather, tp_async_bwd, tp_comm_overlap, fp8_param_gather, mxfp8_grad_buf,
        moe_shared_overlap, moe_ep_overlap, delay_wgrad, pad_capacity, acct_emb, acct_loss, no_overlap_grad;
    gboolean by_name;            /* wl_step_run fills wl_step.by_name (not an option of the group) */
    char *timeline;              /* wl_step_run writes the step's Perfetto timeline here, replaying every
                                  * chunk (exact); not an option of the group, not freed by wl_opts_clear */
} wl_opts;

/* Model, parallelism and training options (with_layout: --gpus/--tp/--pp/--dp and --topo; scale takes
 * its systems and sizes from --systems). */
GOptionGroup *wl_opts_group(wl_opts *o, gboolean with_layout);
void wl_opts_clear(wl_opts *o);
/* --moe-layer-freq's value (an integer N, or Megatron-LM's list of each layer's kind) into o: FALSE
 * with *err when it is neither (the option and the sweep key share it). */
gboolean wl_opts_set_moe_freq(wl_opts *o, const char *value, GError **err);
/* --window-size's value (W, or Megatron-LM's "W,0": a query sees itself and the W tokens before it) and
 * --window-attn-skip-freq's (N, or Megatron-LM's list, 1 a windowed layer) into o; FALSE with *err. */
gboolean wl_opts_set_window(wl_opts *o, const char *value, GError **err);
gboolean wl_opts_set_window_freq(wl_opts *o, const char *value, GError **err);
/* --model list: print the presets (shape, parameters, source) to out and
 * return TRUE; FALSE when -m is not "list". */
gboolean wl_opts_list_models(const wl_opts *o, FILE *out);

/* The spec the options describe (defaults applied, not yet checked).
 * false with *err on an unknown model or a bad value (exit 2). */
gboolean wl_opts_spec(const wl_opts *o, workload_spec *w, GError **err);

/* The topology --sets without the gpu.* ones (NULL-terminated; caller g_strfreev's). */
char **wl_opts_topo_sets(const wl_opts *o);

/* The compute model of topology t's GPU with the gpu.* --sets applied. */
gboolean wl_opts_gpu(const wl_opts *o, const topo *t, gpu_model *g, GError **err);
/* What the generator takes from the system beside the GPU: its compute capability (fp8's layouts
 * in the memory estimate) and the GPUs of one NVLink domain (a server, a GB200 NVL72 rack; at most
 * w->gpus), for the flex dispatcher. */
void wl_opts_system(const topo *t, const gpu_model *g, workload_spec *w);

/* A note on stderr (prefixed "conveyor CMD: ") where w is a layout Megatron-LM refuses but conveyor
 * generates: tp > 1 and ep > 1 without --sp. Whether it printed one. */
bool wl_opts_megatron_note(const char *cmd, const workload_spec *w);

/* The integer field of o behind option KEY ("layers", "kv_heads" for --kv-heads, ...), NULL if none. */
gint *wl_opts_int_field(wl_opts *o, const char *key);

/* What one replayed training step gives. */
typedef struct {
    char gpu[32];          /* the compute model's GPU name */
    double step_s, tokens_s, tflops, mfu, exposed; /* TFLOP/s per GPU from the trace's FLOPs; MFU from the model's */
    double exposed_net;    /* the part of `exposed` with traffic between servers (NVLink domains) in flight */
    char server_fabric[16]; /* inside a server (NVLink domain): "NVLink" or "PCIe" */
    char net_fabric[32];    /* between them: the fabric's name, "" for one server */
    double compute, idle;  /* mean over the ranks, shares of the step: compute running (replay_rank.compute_ps),
                            * nothing running (idle_ps: pipeline bubbles, waiting on peers); with
                            * `exposed` they make the whole step */
    GArray *by_name;       /* o->by_name: replay_exposed, largest first, summed over ranks
                            * (divide by ranks and step for a share); wl_step_clear frees */
    GArray *compute_by_name; /* o->by_name: the compute time by op name, the same way */
    int nranks;
    double mem_bytes;      /* the busiest rank's memory estimate (workload_memory_bytes, with the GPU's
                            * compute capability for fp8's layouts) */
    double wall_s;
    uint64_t events;       /* engine events of the replay and its isolated runs */
    int dp;
} wl_step;

/* Frees a wl_step's name lists. */
void wl_step_clear(wl_step *s);

/* Build `system` (fabric override or NULL) with w->gpus GPUs (the first G of
 * a server, or whole servers), generate w's step with the GPU's compute
 * model and replay it: repeated collectives and transfers reused on a
 * second copy of the cluster unless exact (then every rank and collective
 * is simulated). w must have passed workload_spec_check. false with *err
 * on a bad topology, a GPU count that is not whole servers, or a replay
 * failure. Used by `conveyor scale` and the sweep's scale base. */
gboolean wl_step_run(const wl_opts *o, const char *system, const char *fabric, const workload_spec *w, gboolean exact,
                     wl_step *out, GError **err);

/* Peak bytes per generated op: replayed (scale; measured 6.1 GB for the 21.3 M
 * ops of the 1,536-GPU per-parameter ZeRO-3 step), or written as a native
 * JSON trace (workload -o; measured 2.69 GB for 1.77 M ops). */
#define WL_BYTES_PER_OP_REPLAY 300.0
#define WL_BYTES_PER_OP_JSON 1600.0
/* false with *err when the step's trace would not fit in 3/4 of this
 * machine's memory (workload_op_estimate x bytes_per_op); `use` says what
 * the trace is for ("replay", "write"). */
gboolean wl_opts_fits_memory(const workload_spec *w, double bytes_per_op, const char *use, GError **err);

#endif
