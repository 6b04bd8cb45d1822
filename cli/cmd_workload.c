/* cli/cmd_workload.c - `conveyor workload`: write the native trace of one
 * training step (traces/workload.c) for a model, a parallel layout and the
 * GPU kind of a system. */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "commands.h"
#include "traces/native.h"
#include "wlopts.h"
#include "megatron_args.h"

/* ", 1F1B, uneven stages of 2,3,3,2 layers" (workload_stage_layers) */
static void print_stages(const workload_spec *w)
{
    printf(", 1F1B, uneven stages of ");
    for (int s = 0; s < w->pp; s++)
        printf("%s%d", s ? "," : "", workload_stage_layers(w, s, NULL));
    printf(" layers");
}

/* ", interleaved 1F1B (2 model chunks per pp rank), uneven chunks of 3,4 | 4,4 | ... layers" */
static void print_chunks(const workload_spec *w)
{
    printf(", interleaved 1F1B (%d model chunks per pp rank), uneven chunks of ", w->vpp);
    for (int s = 0; s < w->pp; s++)
        for (int c = 0; c < w->vpp; c++)
            printf("%s%d", c ? "," : s ? " | " : "", workload_chunk_layers(w, s, c, NULL));
    printf(" layers");
}

/* ", layout 'E|t*4|t*4|L': 1F1B, chunks E+0 | 4 | 4 | 0+L" (decoder layers
 * per model chunk, stage by stage, with the embedding, MTP layers and loss) */
static void print_layout(const workload_spec *w)
{
    int ms = workload_mtp_stage(w);
    printf(", layout '%s': ", w->pp_layout);
    if (w->vpp > 1)
        printf("interleaved 1F1B (%d model chunks per pp rank)", w->vpp);
    else
        printf("1F1B");
    printf(", decoder layers ");
    for (int s = 0; s < w->pp; s++)
        for (int c = 0; c < w->vpp; c++)
            printf("%s%s%d%s%s", c ? "," : s ? " | " : "", s == 0 && c == 0 ? "E+" : "",
                   workload_chunk_layers(w, s, c, NULL), s == ms && c == w->vpp - 1 ? "+m" : "",
                   s == w->pp - 1 && c == w->vpp - 1 ? "+L" : "");
}

static int run(wl_opts *o, const char *out)
{
    GError *err = NULL;
    workload_spec w;
    if (!wl_opts_spec(o, &w, &err) || !workload_spec_check(&w, &err))
        return cli_fail(err);
    wl_opts_megatron_note("workload", &w);
    if (!o->topo) { /* the command line has none: scale's default system */
        o->topo = g_strdup("dgx-h100");
        fprintf(stderr, "conveyor workload: no --topo: compute timed for dgx-h100's GPU (H100-SXM); "
                        "--topo SYS for another (see 'conveyor topo list')\n");
    }
    g_auto(GStrv) sets = wl_opts_topo_sets(o);
    topo_opts to = {.fabric = o->fabric, .sets = (const char *const *)sets};
    topo *tp = topo_load(o->topo, &to, &err);
    if (!tp)
        return cli_fail(err);
    gpu_model g;
    gboolean ok = wl_opts_gpu(o, tp, &g, &err);
    if (ok)
        wl_opts_system(tp, &g, &w); /* fp8's layouts in the memory estimate, flex's NVLink domains */
    topo_free(tp);
    if (!ok)
        return cli_fail(err);
    if (!wl_opts_fits_memory(&w, WL_BYTES_PER_OP_JSON, "write", &err))
        return cli_fail(err);
    trace *t = workload_generate(&w, &g, &err);
    if (!t)
        return cli_fail(err);
    int rc = EXIT_OK;
    if (!trace_native_write_json(t, out, &err)) {
        rc = cli_fail(err);
    } else {
        double flops = workload_step_flops(&w), tokens = (double)w.global_batch * w.seq;
        char etp[32] = "", cpx[64] = "";
        if (w.etp > 1)
            g_snprintf(etp, sizeof etp, ", etp %d", w.etp);
        char cpl[48];
        if (w.cp > 1) /* how the CP ranks exchange K, V */
            g_snprintf(cpx, sizeof cpx, " (%s)", workload_cp_comm_label(&w, cpl, sizeof cpl));
        char dt[128]; /* the GEMMs' precision, fp8's recipe */
        if (w.dtype == COMPUTE_FP8)
            g_snprintf(dt, sizeof dt, "fp8 (%s%s)", workload_fp8_recipe_name(w.fp8_recipe),
                       workload_fp8_param_gather_label(&w));
        else
            g_strlcpy(dt, compute_dtype_name(w.dtype), sizeof dt);
        char moe[160], mla[128];
        printf("workload %s%s on %s (%s): %d GPUs = tp %d x pp %d x dp %d x cp %d%s, ep %d%s%s%s%s, %s, %s%s\n", w.m.name,
               workload_attn_label(&w.m, mla, sizeof mla), o->topo, g.spec.name, w.gpus, w.tp, w.pp, w.dp, w.cp, cpx,
               w.ep, etp,
               workload_moe_label(&w, moe, sizeof moe), w.sp ? ", sp" : "",
               w.tp_comm_overlap ? " (TP comm overlap)" : "",
               w.zero == 3 ? (w.fsdp ? "FSDP" : w.zero3_param_sync ? "ZeRO-3 per parameter (DeepSpeed 2021)" : "ZeRO-3")
               : w.zero ? (w.zero == 1 ? "ZeRO-1" : "ZeRO-2")
                        : "DDP",
               dt, w.attn_backend == WL_ATTN_UNFUSED ? ", unfused attention" : "");
        char mtp[64] = "";
        if (w.mtp > 0)
            g_snprintf(mtp, sizeof mtp, " + %.3f B in %d MTP layer%s", w.mtp * workload_mtp_params(&w.m) / 1e9, w.mtp,
                       w.mtp > 1 ? "s" : "");
        printf("params %.3f B%s; step: %d sequences x %d tokens = %.0f tokens, %d microbatches of %d per pipeline",
               workload_params(&w.m) / 1e9, mtp, w.global_batch, w.seq, tokens, w.global_batch / (w.micro_batch * w.dp),
               w.micro_batch);
        if (w.pp_layout)
            print_layout(&w);
        else if (w.pp > 1 && w.vpp > 1 && w.m.layers % (w.pp * w.vpp) == 0)
            printf(", interleaved 1F1B (%d model chunks of %d layers per pp rank)", w.vpp, w.m.layers / (w.pp * w.vpp));
        else if (w.pp > 1 && w.vpp > 1)
            print_chunks(&w);
        else if (w.pp > 1 && w.m.layers % w.pp)
            print_stages(&w);
        else if (w.pp > 1)
            printf(", 1F1B");
        if (w.moe_ep_overlap)
            printf(", combined 1F1B (forward and backward paired by layer, the all-to-alls beside the other's "
                   "compute%s)", w.delay_wgrad ? ", weight gradients delayed" : "");
        printf("\n");
        printf("model FLOPs per step %.4g (%.4g per GPU); memory estimate of the busiest GPU %.1f GiB of %.0f\n", flops,
               flops / w.gpus, workload_memory_bytes(&w) / 1073741824.0, g.spec.mem_bytes / 1073741824.0);
        printf("wrote %s: %d ranks, %zu ops\n", out, t->nranks, trace_op_count(t));
    }
    trace_free(t);
    return rc;
}

int cmd_workload(int argc, char **argv)
{
    wl_opts o = {0};
    char *out = NULL;
    GOptionEntry e[] = {
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &out, "trace to write (native JSON; - for stdout)", "FILE"},
        {0},
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new("- write the trace of one training step (Megatron-LM, "
                                                         "DeepSpeed ZeRO, PyTorch FSDP)");
    g_option_context_set_main_group(ctx, wl_opts_group(&o, TRUE));
    g_option_context_add_main_entries(ctx, e, NULL);
    g_autoptr(GPtrArray) margs = NULL; /* --megatron-args FILE said as options (megatron_args.h) */
    if (!megatron_args_expand("workload", &argc, &argv, &margs)) {
        wl_opts_clear(&o);
        return EXIT_BADINPUT;
    }
    int rc = cli_parse(ctx, "workload", &argc, &argv) ? EXIT_OK : EXIT_BADINPUT;
    if (rc == EXIT_OK && !cli_dash_output("workload", (const char *[]){out}, 1))
        rc = EXIT_BADINPUT;
    if (rc == EXIT_OK && argc > 1) {
        fprintf(stderr, "conveyor workload: unexpected argument '%s'\n", argv[1]);
        rc = EXIT_BADINPUT;
    }
    if (rc == EXIT_OK && wl_opts_list_models(&o, stdout)) {
        g_free(out);
        wl_opts_clear(&o);
        return EXIT_OK;
    }
    if (rc == EXIT_OK && !out) {
        fprintf(stderr, "conveyor workload: -o FILE is required\n");
        rc = EXIT_BADINPUT;
    }
    if (rc == EXIT_OK)
        rc = run(&o, out);
    g_free(out);
    wl_opts_clear(&o);
    return rc;
}
