/* sim/simtime.h - the simulated time axis.
 *
 * Time is sim_time: a signed 64-bit count of picoseconds (about 106 days of
 * range). Conversions to and from seconds/microseconds happen only at the
 * edges (input parsing, output printing). Additions that could leave the
 * axis go through sim_time_add(), which reports overflow instead of wrapping.
 */
#ifndef SIM_SIMTIME_H
#define SIM_SIMTIME_H

#include <stdbool.h>
#include <stdint.h>

typedef int64_t sim_time;

#define SIM_TIME_MAX INT64_MAX
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

static inline double sim_time_to_s(sim_time t) { return (double)t * 1e-12; }
static inline double sim_time_to_us(sim_time t) { return (double)t * 1e-6; }

/* Seconds/microseconds to sim_time, rounded to the nearest picosecond.
 * Values beyond the axis saturate at SIM_TIME_MAX; callers that accept user
 * input check with sim_time_fits_s() first. */
static inline bool sim_time_fits_s(double s) { return s >= 0 && s < 9.2e6; }
static inline sim_time sim_time_from_s(double s)
{
    return sim_time_fits_s(s) ? (sim_time)(s * 1e12 + 0.5) : SIM_TIME_MAX;
}
static inline sim_time sim_time_from_us(double us) { return sim_time_from_s(us * 1e-6); }
static inline sim_time sim_time_from_ns(double ns) { return sim_time_from_s(ns * 1e-9); }

/* Time to serialise `bytes` at `bw_Bps` bytes per second, rounded up to a
 * whole picosecond (never 0 for a non-empty transfer). bw_Bps must be > 0. */
static inline sim_time sim_time_for_bytes(double bytes, double bw_Bps)
{
    double ps = bytes / bw_Bps * 1e12;
    if (ps >= 9.2e18)
        return SIM_TIME_MAX;
    sim_time t = (sim_time)ps;
    return ((double)t < ps) ? t + 1 : t;
}

#endif
