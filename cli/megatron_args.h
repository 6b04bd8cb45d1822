/* cli/megatron_args.h - Megatron-LM's pretrain_gpt.py arguments as conveyor's
 * workload options (`workload` and `scale --megatron-args FILE`). */
#ifndef CLI_MEGATRON_ARGS_H
#define CLI_MEGATRON_ARGS_H

#include <glib.h>

/* Replace every "--megatron-args FILE" (or "--megatron-args=FILE") in
 * *argv by the options FILE's Megatron-LM arguments say, in place, so that
 * options after it override it. *argv becomes a new vector whose strings
 * *owned holds (g_ptr_array_unref it after parsing; NULL where argv had no
 * such option). False, with the error on stderr (prefixed "conveyor cmd:",
 * naming FILE and its line), for an unreadable file, a bad value or an
 * argument conveyor cannot take. Notes (what was ignored, what is not
 * modelled) go to stderr too. */
gboolean megatron_args_expand(const char *cmd, int *argc, char ***argv, GPtrArray **owned);

/* The translation of one file's text, megatron_args_expand's core:
 * conveyor's options in out, the Megatron-LM arguments it ignored in
 * ignored, the notes on what is not modelled in notes (strings owned by the
 * arrays, which free them with g_free). path names the file in errors. */
gboolean megatron_args_translate(const char *path, const char *text, GPtrArray *out, GPtrArray *ignored,
                                 GPtrArray *notes, GError **err);

#endif
