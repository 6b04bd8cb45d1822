/* sim/engine.c - event pool + queue + run loop.
 *
 * Events are slots in a growable array recycled through a free list; the
 * queue's payload is the slot index. A cancelled event's slot is freed at
 * cancel time.
 */
#include "engine.h"

#include <glib.h>

#include "mem.h"
#include "queue.h"

typedef struct {
    sim_handler fn;
    void *ctx;
    uint64_t arg; /* while the slot is free: the next free slot */
} slot;           /* 24 bytes */

#define NO_SLOT UINT32_MAX

struct sim_engine {
    sim_time now;
    sim_queue *q;
    slot *pool;
    uint32_t pool_len, pool_cap, free_head;
    sim_rng rng;
    bool stop;
    int error;
    sim_stats stats;
    sim_progress_fn progress;
    void *progress_ctx;
};

sim_engine *sim_engine_new(uint64_t seed)
{
    sim_engine *e = g_new0(sim_engine, 1);
    e->q = sim_queue_new(1024);
    e->pool_cap = 1024;
    e->pool = g_new(slot, e->pool_cap);
    e->free_head = NO_SLOT;
    sim_queue_set_prefetch(e->q, e->pool, sizeof(slot));
    sim_rng_seed(&e->rng, seed);
    return e;
}

void sim_engine_free(sim_engine *e)
{
    if (!e)
        return;
    sim_queue_free(e->q);
    g_free(e->pool);
    g_free(e);
}

sim_time sim_engine_now(const sim_engine *e) { return e->now; }
sim_rng *sim_engine_rng(sim_engine *e) { return &e->rng; }
size_t sim_engine_pending(const sim_engine *e) { return sim_queue_len(e->q); }
int sim_engine_error(const sim_engine *e) { return e->error; }

const char *sim_engine_strerror(int code)
{
    switch (code) {
    case SIM_OK: return "";
    case SIM_ETIME_OVERFLOW:
        return "the simulated time passed the clock's range (2^60 ps, about 13 days): a transfer or kernel too slow "
               "for its size";
    case SIM_EPAST: return "an event was scheduled in the past (a model's bug)";
    case SIM_ETOO_MANY: return "more than 2^24 events pending at once";
    default: return "unknown engine error";
    }
}
const sim_stats *sim_engine_stats(const sim_engine *e) { return &e->stats; }
void sim_engine_stop(sim_engine *e) { e->stop = true; }

void sim_engine_set_progress(sim_engine *e, sim_progress_fn fn, void *ctx)
{
    e->progress = fn;
    e->progress_ctx = ctx;
}

static uint32_t slot_alloc(sim_engine *e)
{
    if (e->free_head != NO_SLOT) {
        uint32_t i = e->free_head;
        e->free_head = (uint32_t)e->pool[i].arg;
        return i;
    }
    if (e->pool_len == SIM_QUEUE_MAX_PAYLOAD)
        return NO_SLOT;
    if (e->pool_len == e->pool_cap) {
        e->pool_cap *= 2;
        e->pool = sim_mem_renew(e->pool, e->pool_cap * sizeof(slot));
        sim_queue_set_prefetch(e->q, e->pool, sizeof(slot));
    }
    return e->pool_len++;
}

static void slot_release(sim_engine *e, uint32_t i)
{
    e->pool[i].arg = e->free_head;
    e->free_head = i;
}

static sim_event fail(sim_engine *e, int code)
{
    if (!e->error)
        e->error = code;
    e->stop = true;
    return (sim_event){.seq = UINT64_MAX};
}

sim_event sim_engine_at(sim_engine *e, sim_time at, sim_handler fn, void *ctx, uint64_t arg)
{
    if (at >= SIM_TIME_LIMIT)
        return fail(e, SIM_ETIME_OVERFLOW);
    if (at < e->now)
        return fail(e, SIM_EPAST);
    uint32_t i = slot_alloc(e);
    if (i == NO_SLOT)
        return fail(e, SIM_ETOO_MANY);
    e->pool[i] = (slot){.fn = fn, .ctx = ctx, .arg = arg};
    uint64_t seq = sim_queue_push(e->q, at, i);
    size_t n = sim_queue_len(e->q);
    if (n > e->stats.peak_pending)
        e->stats.peak_pending = n;
    return (sim_event){.seq = seq};
}

sim_event sim_engine_after(sim_engine *e, sim_time delay, sim_handler fn, void *ctx, uint64_t arg)
{
    sim_time at;
    if (!sim_time_add(e->now, delay, &at))
        return fail(e, delay < 0 ? SIM_EPAST : SIM_ETIME_OVERFLOW);
    return sim_engine_at(e, at, fn, ctx, arg);
}

bool sim_engine_cancel(sim_engine *e, sim_event ev)
{
    uint32_t i;
    if (ev.seq == UINT64_MAX || !sim_queue_cancel(e->q, ev.seq, &i))
        return false;
    slot_release(e, i);
    return true;
}

static int run_loop(sim_engine *e, bool bounded, sim_time limit)
{
    gint64 t0 = g_get_monotonic_time();
    sim_time t;
    uint32_t i;
    e->stop = false;
    while (!e->stop) {
        /* one queue call per event: pop (bounded: only if due) */
        if (bounded ? !sim_queue_pop_until(e->q, limit, &t, &i) : !sim_queue_pop(e->q, &t, &i))
            break;
        slot s = e->pool[i];
        slot_release(e, i);
        e->now = t;
        e->stats.events++; /* live: handlers may read it */
        s.fn(e, s.ctx, s.arg);
        if (G_UNLIKELY(e->progress && (e->stats.events & (SIM_PROGRESS_EVENTS - 1)) == 0))
            e->progress(e, e->progress_ctx);
    }
    if (bounded && !e->stop && limit > e->now)
        e->now = limit;
    e->stats.wall_s += (double)(g_get_monotonic_time() - t0) * 1e-6;
    return e->error;
}

int sim_engine_run(sim_engine *e) { return run_loop(e, false, 0); }

int sim_engine_run_until(sim_engine *e, sim_time t) { return run_loop(e, true, t); }
