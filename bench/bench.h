/* bench/bench.h - benchmark cases for `make bench`.
 *
 * A case runs once in a forked child (so its peak RSS is its own) and fills a
 * bench_result; the driver prints a table and writes build/bench.json.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdint.h>

typedef struct {
    uint64_t events;
    double wall_s;
    double sim_s;      /* simulated seconds, 0 if not meaningful */
    char note[160];    /* one line for the human table */
} bench_result;

typedef struct {
    const char *name;       /* e.g. "engine.hold" */
    const char *params_json; /* e.g. "{\"n\": 100000}" */
    int (*run)(const void *arg, bench_result *out); /* 0 on success */
    const void *arg;
} bench_case;

/* Case tables, one per benchmark file; each ends with a {0} entry. */
extern const bench_case bench_engine_cases[];
extern const bench_case bench_fabric_cases[];
extern const bench_case bench_coll_cases[];
extern const bench_case bench_replay_cases[];
extern const bench_case bench_scale_cases[];

#endif
