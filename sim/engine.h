/* sim/engine.h - the discrete-event engine.
 *
 * An engine owns a clock, a pending-event queue, an event pool (no malloc
 * per event) and an RNG. Models schedule handlers at absolute times; the run
 * loop pops them in (time, insertion) order. It knows nothing about GPUs,
 * links or collectives.
 */
#ifndef SIM_ENGINE_H
#define SIM_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rng.h"
#include "simtime.h"

typedef struct sim_engine sim_engine;

/* An event handler: runs at sim_engine_now(e) with the ctx/arg it was
 * scheduled with. */
typedef void (*sim_handler)(sim_engine *e, void *ctx, uint64_t arg);

/* Handle to a pending event, for sim_engine_cancel(). */
typedef struct {
    uint64_t seq;
} sim_event;

enum {
    SIM_OK = 0,
    SIM_ETIME_OVERFLOW = -1, /* an event was scheduled at or past SIM_TIME_LIMIT */
    SIM_EPAST = -2,          /* an event was scheduled before now */
    SIM_ETOO_MANY = -3,      /* more than 2^24 (16.7 million) events pending at once */
};

typedef struct {
    uint64_t events;  /* events processed by run calls so far */
    double wall_s;    /* wall-clock seconds spent in run calls */
    size_t peak_pending;
} sim_stats;

/* New engine at time 0 with the RNG seeded by `seed`. Caller owns it. */
sim_engine *sim_engine_new(uint64_t seed);
void sim_engine_free(sim_engine *e);

sim_time sim_engine_now(const sim_engine *e);
sim_rng *sim_engine_rng(sim_engine *e);

/* Schedule fn(e, ctx, arg) at absolute time `at` (>= now). On a time in the
 * past or an overflowing time the event is not scheduled, the engine's error
 * is set (sim_engine_error), the current run stops, and the returned handle
 * has seq UINT64_MAX. */
sim_event sim_engine_at(sim_engine *e, sim_time at, sim_handler fn, void *ctx, uint64_t arg);

/* Same, `delay` picoseconds from now (delay >= 0); overflow as above. */
sim_event sim_engine_after(sim_engine *e, sim_time delay, sim_handler fn, void *ctx, uint64_t arg);

/* Cancel a pending event; returns false if it already ran or was cancelled. */
bool sim_engine_cancel(sim_engine *e, sim_event ev);

/* Run until no events are left, a stop is requested, or an error occurs.
 * Returns SIM_OK or the error code. */
int sim_engine_run(sim_engine *e);

/* Run events with time <= t, then set the clock to t (if it stopped for that
 * reason). Returns as sim_engine_run. */
int sim_engine_run_until(sim_engine *e, sim_time t);

/* Ask the running loop to return after the current event. */
void sim_engine_stop(sim_engine *e);

/* Call fn(e, ctx) from the run loop every SIM_PROGRESS_EVENTS events (for a
 * progress line on long runs; fn must not schedule or run events). NULL
 * turns it off. */
#define SIM_PROGRESS_EVENTS (UINT64_C(1) << 20)
typedef void (*sim_progress_fn)(sim_engine *e, void *ctx);
void sim_engine_set_progress(sim_engine *e, sim_progress_fn fn, void *ctx);

size_t sim_engine_pending(const sim_engine *e);
int sim_engine_error(const sim_engine *e);
/* What an error code means, in words for a user ("" for SIM_OK). */
const char *sim_engine_strerror(int code);
const sim_stats *sim_engine_stats(const sim_engine *e);

#endif
