/* sim/simtime.h - the simulated time axis.
 *
 * Time is sim_time: a signed 64-bit count of picoseconds. Events live below
 * SIM_TIME_LIMIT (2^60 ps, about 13.3 days); durations made from bytes or
 * seconds saturate at it, so a sum of a few times (now + a lead + a transfer
 * + a latency) stays far inside int64 and the engine refuses the event
 * (SIM_ETIME_OVERFLOW) instead of the sum wrapping. Conversions to and from seconds/microseconds happen only at the
 * edges (input parsing, output printing). Additions that could leave the
 * axis go through sim_time_add(), which reports overflow instead of wrapping.
 */
#ifndef SIM_SIMTIME_H
#define SIM_SIMTIME_H

#include <stdbool.h>
#include <stdint.h>

typedef int64_t sim_time;

#define SIM_TIME_MAX INT64_MAX
#define SIM_TIME_LIMIT ((sim_time)1 << 60)
#define SIM_PS ((sim_time)1)
#define SIM_NS ((sim_time)1000)
#define SIM_US ((sim_time)1000000)
#define SIM_MS ((sim_time)1000000000)
#define SIM_S ((sim_time)1000000000000)

/* a + b into *out; returns false (and leaves *out alone) on overflow or when
 * either operand is negative. */
static inline bool sim_time_add(sim_time a, sim_time b, sim_time *out)
{
    if (a < 0 || b < 0 || a > SIM_TIME_MAX - b)
        return false;
    *out = a + b;
    return true;
}

/* a + b for a, b >= 0, or SIM_TIME_MAX where int64 would wrap: the engine
 * refuses an event at or past SIM_TIME_LIMIT (SIM_ETIME_OVERFLOW), and
 * sums over many chunks (a link's queueing delay) stay at the top. */
static inline sim_time sim_time_sat_add(sim_time a, sim_time b)
{
    return a > SIM_TIME_MAX - b ? SIM_TIME_MAX : a + b;
}

/* ps (a model's double) rounded to the nearest picosecond, SIM_TIME_LIMIT
 * at most: past the clock's range, the engine's error where it is used. */
static inline sim_time sim_time_from_ps(double ps)
{
    return ps < (double)SIM_TIME_LIMIT ? (sim_time)(ps + 0.5) : SIM_TIME_LIMIT;
}

static inline double sim_time_to_s(sim_time t) { return (double)t * 1e-12; }
static inline double sim_time_to_us(sim_time t) { return (double)t * 1e-6; }

/* Seconds/microseconds to sim_time, rounded to the nearest picosecond.
 * Values beyond the axis saturate at SIM_TIME_LIMIT; callers that accept user
 * input check with sim_time_fits_s() first. */
static inline bool sim_time_fits_s(double s) { return s >= 0 && s * 1e12 < (double)SIM_TIME_LIMIT; }
static inline sim_time sim_time_from_s(double s)
{
    return sim_time_fits_s(s) ? (sim_time)(s * 1e12 + 0.5) : SIM_TIME_LIMIT;
}
static inline sim_time sim_time_from_us(double us) { return sim_time_from_s(us * 1e-6); }
static inline sim_time sim_time_from_ns(double ns) { return sim_time_from_s(ns * 1e-9); }

/* Time to serialise `bytes` at `bw_Bps` bytes per second, rounded up to a
 * whole picosecond (never 0 for a non-empty transfer), SIM_TIME_LIMIT at
 * most. bw_Bps must be > 0. */
static inline sim_time sim_time_for_bytes(double bytes, double bw_Bps)
{
    double ps = bytes / bw_Bps * 1e12;
    if (!(ps < (double)SIM_TIME_LIMIT))
        return SIM_TIME_LIMIT;
    sim_time t = (sim_time)ps;
    return ((double)t < ps) ? t + 1 : t;
}

#endif
