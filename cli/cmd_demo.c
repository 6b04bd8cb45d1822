/* cli/cmd_demo.c - `conveyor demo`: a tiny engine run, until the real main
 * job (a collective sweep) is wired in. */
#include <stdio.h>

#include "cli.h"
#include "commands.h"
#include "sim/engine.h"

static void on_hold(sim_engine *e, void *ctx, uint64_t arg)
{
    uint64_t *left = ctx;
    if (*left == 0)
        return;
    (*left)--;
    sim_engine_after(e, (sim_time)sim_rng_exp(sim_engine_rng(e), 1e6) + 1, on_hold, ctx, arg);
}

int cmd_demo(int argc, char **argv)
{
    gint64 n = 1000000;
    GOptionEntry entries[] = {
        {"events", 'n', 0, G_OPTION_ARG_INT64, &n, "events to process [1000000]", "N"},
        {0},
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new("- run a small built-in engine demo");
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (!cli_parse(ctx, "demo", &argc, &argv))
        return EXIT_BADINPUT;
    if (argc > 1) {
        fprintf(stderr, "conveyor demo: unexpected argument '%s' (see 'conveyor demo --help')\n", argv[1]);
        return EXIT_BADINPUT;
    }
    if (n < 0 || n > 1000000000) {
        fprintf(stderr, "conveyor demo: --events must be in 0..1e9, got %" G_GINT64_FORMAT "\n", n);
        return EXIT_BADINPUT;
    }
    sim_engine *e = sim_engine_new(1);
    uint64_t left = (uint64_t)n;
    for (int i = 0; i < 1000; i++)
        sim_engine_at(e, 0, on_hold, &left, (uint64_t)i);
    sim_engine_run(e);
    const sim_stats *st = sim_engine_stats(e);
    printf("demo: %llu events, simulated %.3f ms, wall %.3f s, %.1f M events/s\n",
           (unsigned long long)st->events, sim_time_to_s(sim_engine_now(e)) * 1e3, st->wall_s,
           st->wall_s > 0 ? st->events / st->wall_s / 1e6 : 0.0);
    sim_engine_free(e);
    return EXIT_OK;
}
