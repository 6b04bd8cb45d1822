/* cli/main.c - the conveyor binary: a dispatcher over subcommands.
 * Each subcommand lives in its own cli/cmd_*.c and parses its own options.
 */
#include <stdio.h>
#include <string.h>

#include "traces/json_arena.h"
#include "cli.h"
#include "commands.h"

static const cli_command commands[] = {
    {"demo", "a short built-in run of the engine (events/s)", cmd_demo},
    {"collective", "simulate an nccl-tests sweep; prints what nccl-tests prints", cmd_collective},
    {"replay", "replay a training job's trace on a simulated cluster (Perfetto timeline)", cmd_replay},
    {"validate", "compare a real nccl-tests log with the simulation of the same sweep", cmd_validate},
    {"p2p", "GPU x GPU bandwidth and latency matrices (p2pBandwidthLatencyTest layout)", cmd_p2p},
    {"sweep", "run a what-if grid in parallel (threads; MPI with make MPI=1)", cmd_sweep},
    {"topo", "list, show, draw (dot) and import (NCCL XML) system topologies", cmd_topo},
    {"calibrate", "fit model parameters from calibration results and nccl-tests logs", cmd_calibrate},
    {"workload", "generate a training-step trace (Megatron-LM / DeepSpeed / FSDP)", cmd_workload},
    {"scale", "scaling study: step time, speedup and efficiency across sizes and systems", cmd_scale},
};

static void usage(FILE *f)
{
    fprintf(f, "conveyor %s - a discrete-event simulator of GPU-cluster communication\n\n"
               "usage: conveyor [--version] [--help] <command> [options]\n\ncommands:\n",
            CONVEYOR_VERSION);
    for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
        fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'conveyor <command> --help' describes a command's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_BADINPUT;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        printf("conveyor %s\n", CONVEYOR_VERSION);
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return EXIT_OK;
    }
    json_arena_init(); /* cJSON's allocation hooks, before any thread starts (traces/json_arena.h) */
    for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "conveyor: unknown command '%s' (see 'conveyor --help')\n", argv[1]);
    return EXIT_BADINPUT;
}
