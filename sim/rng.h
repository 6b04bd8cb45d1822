/* sim/rng.h - a seeded, deterministic random number generator.
 *
 * xoshiro256** seeded through splitmix64. Each engine owns one; there is no
 * global state, so two engines with the same seed draw the same numbers.
 */
#ifndef SIM_RNG_H
#define SIM_RNG_H

#include <stdint.h>

typedef struct {
    uint64_t s[4];
} sim_rng;

void sim_rng_seed(sim_rng *r, uint64_t seed);
uint64_t sim_rng_u64(sim_rng *r);
/* Uniform in [0, 1). */
double sim_rng_double(sim_rng *r);
/* Uniform in [0, n); n must be > 0. */
uint64_t sim_rng_below(sim_rng *r, uint64_t n);
/* Exponentially distributed with the given mean (> 0). */
double sim_rng_exp(sim_rng *r, double mean);

#endif
