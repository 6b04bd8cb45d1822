/* cli/bands.h - error bands shared by the commands that print them
 * (replay, sweep): topologies/accuracy.h applied to a command's results. */
#ifndef CLI_BANDS_H
#define CLI_BANDS_H

#include <stdbool.h>

#include "models/replay.h"
#include "topologies/accuracy.h"

/* The step's 80% band of a replay: the exposed communication (per step, of
 * the rank that exposes the most) scaled by its collectives' validation
 * bands (topologies/accuracy.h), weighted by their simulated time; compute
 * and hidden communication taken as simulated. False when no collective has
 * a band. regimes (may be NULL): bit r set for each regime acc_regime r of
 * a collective with a band; unmeasured (may be NULL): set when one of them
 * is a regime the validation did not measure for this kind of system
 * (acc_regime_measured). */
bool cli_replay_step_band(const replay_result *res, const coll_system *sys, int steps, double *lo_s, double *hi_s,
                          double *exposed_s, unsigned *regimes, bool *unmeasured);

/* Load the bands files now (their cache is not thread-safe: call on the
 * main thread before workers look bands up, as sweep does). */
void cli_bands_preload(void);

#endif
