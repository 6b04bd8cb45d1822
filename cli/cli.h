/* cli/cli.h - what the subcommands share: the command table, exit codes,
 * and small parsers for command-line values.
 */
#ifndef CLI_H
#define CLI_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#define CONVEYOR_VERSION "0.1.0"

enum { EXIT_OK = 0, EXIT_INTERNAL = 1, EXIT_BADINPUT = 2 };

typedef struct {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
} cli_command;

/* Parse a byte count with an optional K/M/G/T suffix (powers of two, as
 * nccl-tests). Refuses negatives, garbage and values above 2^50 (1 PiB)
 * with a message in *err. */
gboolean cli_parse_bytes(const char *s, uint64_t *out, GError **err);

/* An integer option's value: a decimal whole number in lo..hi, else FALSE
 * with a G_OPTION_ERROR naming the option ("--tp: expected a whole number
 * in 1..1048576, got '0'"). For options whose 0 used to read as "not
 * given" (GOption's ints have no unset state): they parse through a
 * G_OPTION_ARG_CALLBACK with this. */
gboolean cli_int_arg(const char *opt, const char *value, gint64 lo, gint64 hi, int *out, GError **err);

/* The initial value of an integer option whose 0 is not "not given": after
 * parsing, CLI_UNSET means it was not given, and anything else is checked
 * as the user's (an explicit 0 used to run with the default). */
#define CLI_UNSET G_MININT

/* The sizes nccl-tests would run from lo to hi: times factor (>= 2), else
 * plus step. NULL with *err when lo > hi, neither a factor nor a step is
 * given, hi is above CLI_MAX_COLL_BYTES (no GPU holds a terabyte, and
 * simulating a petabyte's chunks took hours), or there would be more than
 * CLI_MAX_COLL_SIZES sizes (they were cut there, silently). */
#define CLI_MAX_COLL_BYTES (1ull << 40)
#define CLI_MAX_COLL_SIZES 4096 /* sizes in one sweep */
GArray *cli_coll_sizes(uint64_t lo, uint64_t hi, int factor, uint64_t step, GError **err);

/* Parse argv with `ctx`; on failure prints "conveyor NAME: message" and
 * returns FALSE (caller exits 2). */
gboolean cli_parse(GOptionContext *ctx, const char *name, int *argc, char ***argv);

/* Print "conveyor: <msg>" to stderr and return EXIT_BADINPUT. Frees err. */
int cli_fail(GError *err);

/* Outputs named "-" (--plot -, --timeline -, -o -) go to standard output
 * and the command's own report (its table, its summary) to standard error,
 * so `conveyor scale ... --plot - > curves.svg` holds just the picture.
 * `paths` has `n` output options (NULL when not given); more than one "-" is
 * an error (message printed, FALSE: exit 2). Call after parsing, before any
 * output. */
gboolean cli_dash_output(const char *cmd, const char *const *paths, size_t n);

/* Whether NCCL's name for an algorithm or protocol (a TUNING line's
 * "NVLS_TREE", "SIMPLE") is conveyor's (coll_algo_name "NVLSTree",
 * coll_proto_name "Simple"): letters and digits compared without case. */
bool cli_same_name(const char *nccl, const char *ours);

/* v, or 0 where printing it with `decimals` decimals would show a signed zero
 * ("-0.0", "-0.0%" of a relative error that rounds away): printf rounds the
 * double's exact value, and half a unit of the last place, as a double, is
 * the same bound. */
double cli_no_neg_zero(double v, int decimals);

#endif
