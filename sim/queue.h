/* sim/queue.h - the pending-event priority queue.
 *
 * (time, seq, payload) entries ordered by time, then by seq (insertion
 * order), so equal times pop FIFO and runs are reproducible. Implemented as a
 * ladder queue (O(1) amortised hold) whose bottom tier is a small sorted run;
 * see sim/queue.c and docs/performance.md.
 */
#ifndef SIM_QUEUE_H
#define SIM_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "simtime.h"

typedef struct sim_queue sim_queue;

/* A new empty queue with room for `capacity` entries (it grows past that).
 * Owned by the caller; free with sim_queue_free(). Aborts on out-of-memory
 * (GLib's policy). */
sim_queue *sim_queue_new(size_t capacity);
void sim_queue_free(sim_queue *q);

/* Payloads must be below this (2^24); sequence numbers below 2^40. */
#define SIM_QUEUE_MAX_PAYLOAD (UINT32_C(1) << 24)

/* Insert an entry; returns its sequence number (unique, increasing), which
 * is also the handle for sim_queue_cancel(). O(1) amortised. */
uint64_t sim_queue_push(sim_queue *q, sim_time t, uint32_t payload);

/* Remove the earliest entry into *t and *payload (either may be NULL); returns
 * false when empty. O(1) amortised. */
bool sim_queue_pop(sim_queue *q, sim_time *t, uint32_t *payload);

/* Pop the earliest entry only if its time is <= limit; false when the queue
 * is empty or the earliest entry is later than limit (nothing removed). */
bool sim_queue_pop_until(sim_queue *q, sim_time limit, sim_time *t, uint32_t *payload);

/* Look at the earliest entry without removing it; false when empty. O(1)
 * amortised (it may move the next batch into the bottom tier). */
bool sim_queue_peek(const sim_queue *q, sim_time *t, uint32_t *payload);

size_t sim_queue_len(const sim_queue *q);

/* Performance hint, no semantic effect: the caller keeps per-entry data at
 * base + payload * stride and reads it right after each pop. When a batch of
 * entries becomes next-due, the queue prefetches their records so that read
 * does not miss the cache. base NULL turns it off. Call again whenever the
 * array moves (e.g. after realloc). */
void sim_queue_set_prefetch(sim_queue *q, const void *base, size_t stride);

/* Remove the entry with sequence number `seq`; returns true and its payload
 * when it was pending, false otherwise. O(n) scan: meant
 * for rare use (timeouts), not the hot path. */
bool sim_queue_cancel(sim_queue *q, uint64_t seq, uint32_t *payload);

#endif
