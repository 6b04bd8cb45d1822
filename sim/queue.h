/* sim/queue.h - the pending-event priority queue.
 *
 * A 4-ary array heap of (time, seq, payload) entries ordered by time, then by
 * seq (insertion order), so equal times pop FIFO and runs are reproducible.
 * Five operations: push, pop, peek, len, cancel. Swappable for a calendar or
 * ladder queue behind the same interface if `make bench` ever says so.
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

/* Insert an entry; returns its sequence number (unique, increasing), which
 * is also the handle for sim_queue_cancel(). O(log n). */
uint64_t sim_queue_push(sim_queue *q, sim_time t, uint32_t payload);

/* Remove the earliest entry into *t and *payload (either may be NULL); returns
 * false when empty. O(log n). */
bool sim_queue_pop(sim_queue *q, sim_time *t, uint32_t *payload);

/* Look at the earliest entry without removing it; false when empty. O(1). */
bool sim_queue_peek(const sim_queue *q, sim_time *t, uint32_t *payload);

size_t sim_queue_len(const sim_queue *q);

/* Remove the entry with sequence number `seq`; returns true and its payload
 * when it was pending, false otherwise. O(n) scan + O(log n) fix-up: meant
 * for rare use (timeouts), not the hot path. */
bool sim_queue_cancel(sim_queue *q, uint64_t seq, uint32_t *payload);

#endif
