/* cli/cmd_calibrate.c - `conveyor calibrate fit FILE... [-o params.json]`:
 * fits latency/bandwidth per measured path from the microbenchmarks' JSON
 * lines (calibrate/run.sh) and per-collective latency from nccl-tests logs,
 * prints the fits with residuals, and writes the params file
 * (calibrate/fit.h, docs/calibration.md). */
#include <stdio.h>
#include <string.h>

#include "calibrate/fit.h"
#include "cli.h"
#include "commands.h"
#include "traces/tracefile.h"

static int fit_files(char **files, int n, const char *out_path)
{
    calib_fit_set *s = calib_fit_set_new();
    calib_params p = {0};
    GError *err = NULL;
    int rc = EXIT_OK;
    for (int i = 0; i < n && !err; i++)
        calib_fit_set_add_file(s, files[i], &err);
    if (err || !calib_fit_set_solve(s, &p, &err)) {
        calib_fit_set_free(s);
        return cli_fail(err);
    }
    calib_fit_set_print(s, stdout);
    char *json = calib_params_to_json(&p);
    if (out_path) {
        char *text = g_strconcat(json, "\n", NULL);
        gboolean wrote = tracefile_set_contents(out_path, text, -1, &err);
        g_free(text);
        if (!wrote) {
            fprintf(stderr, "conveyor calibrate: %s\n", err->message); /* (it names the file) */
            g_error_free(err);
            rc = EXIT_BADINPUT; /* (the -o path) */
        } else {
            printf("params: %zu paths, %zu collectives, %zu single-size values -> %s\n", p.npaths,
                   p.ncollectives, p.nscalars, out_path);
        }
    } else {
        printf("%s\n", json);
    }
    g_free(json);
    calib_params_clear(&p);
    calib_fit_set_free(s);
    return rc;
}

int cmd_calibrate(int argc, char **argv)
{
    char *out = NULL;
    GOptionEntry e[] = {
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &out, "write the params JSON here (default: stdout)", "FILE"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new(
        "fit FILE... - fit alpha (latency) and beta (bandwidth) per path from calibration.jsonl "
        "files and nccl-tests logs");
    g_option_context_add_main_entries(ctx, e, NULL);
    int rc = cli_parse(ctx, "calibrate", &argc, &argv) ? EXIT_OK : EXIT_BADINPUT;
    if (rc == EXIT_OK && !cli_dash_output("calibrate", (const char *[]){out}, 1))
        rc = EXIT_BADINPUT;
    if (rc == EXIT_OK && (argc < 2 || strcmp(argv[1], "fit"))) {
        fprintf(stderr, "conveyor calibrate: expected 'fit FILE...' (see 'conveyor calibrate --help')\n");
        rc = EXIT_BADINPUT;
    } else if (rc == EXIT_OK && argc < 3) {
        fprintf(stderr, "conveyor calibrate fit: give at least one calibration.jsonl or nccl-tests log\n");
        rc = EXIT_BADINPUT;
    }
    if (rc == EXIT_OK)
        rc = fit_files(argv + 2, argc - 2, out);
    g_free(out);
    return rc;
}
