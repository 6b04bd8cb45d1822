/* sim/rng.c - xoshiro256** (Blackman & Vigna) with a splitmix64 seeder. */
#include "rng.h"

#include <glib.h>
#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void sim_rng_seed(sim_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t sim_rng_u64(sim_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double sim_rng_double(sim_rng *r) { return (double)(sim_rng_u64(r) >> 11) * 0x1.0p-53; }

uint64_t sim_rng_below(sim_rng *r, uint64_t n)
{
    /* Lemire's multiply-shift with rejection: unbiased. */
    __uint128_t m = (__uint128_t)sim_rng_u64(r) * n;
    uint64_t lo = (uint64_t)m;
    if (lo < n) {
        uint64_t thresh = -n % n;
        while (lo < thresh) {
            m = (__uint128_t)sim_rng_u64(r) * n;
            lo = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

/* Exponential variates by Marsaglia & Tsang's ziggurat (J. Stat. Softw. 5(8),
 * 2000), 256 layers: one multiply and compare for ~98.9% of draws, a log
 * only in the tail. Tables are built once from the published constants. */
static uint32_t zig_k[256];
static double zig_w[256], zig_f[256];

static void zig_init(void)
{
    const double m2 = 4294967296.0, ve = 3.949659822581572e-3;
    double de = 7.697117470131487, te = de;
    double q = ve / exp(-de);
    zig_k[0] = (uint32_t)((de / q) * m2);
    zig_k[1] = 0;
    zig_w[0] = q / m2;
    zig_w[255] = de / m2;
    zig_f[0] = 1.0;
    zig_f[255] = exp(-de);
    for (int i = 254; i >= 1; i--) {
        de = -log(ve / de + exp(-de));
        zig_k[i + 1] = (uint32_t)((de / te) * m2);
        te = de;
        zig_f[i] = exp(-de);
        zig_w[i] = de / m2;
    }
}

double sim_rng_exp(sim_rng *r, double mean)
{
    static gsize ready = 0;
    if (g_once_init_enter(&ready)) {
        zig_init();
        g_once_init_leave(&ready, 1);
    }
    for (;;) {
        uint64_t u = sim_rng_u64(r);
        unsigned i = (unsigned)(u & 255);
        uint32_t j = (uint32_t)(u >> 32);
        double x = j * zig_w[i];
        if (j < zig_k[i])
            return mean * x;
        if (i == 0)
            return mean * (7.697117470131487 - log(1.0 - sim_rng_double(r)));
        if (zig_f[i] + sim_rng_double(r) * (zig_f[i - 1] - zig_f[i]) < exp(-x))
            return mean * x;
    }
}
