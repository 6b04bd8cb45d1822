/* sim/mem.h - storage for the simulator's large pools and arrays.
 *
 * A large run touches hundreds of megabytes of chunk, transfer, route and
 * event records once each; with 4 KiB pages most of its time can go to page
 * faults (the 1,024-GPU alltoall of `make bench`: about a quarter of its
 * wall time). Blocks of SIM_MEM_HUGE bytes or more are aligned to that size
 * and marked for transparent huge pages (madvise MADV_HUGEPAGE, where the
 * kernel has it; elsewhere they are plain allocations). Free a block with
 * g_aligned_free, a renewed array with g_free.
 */
#ifndef SIM_MEM_H
#define SIM_MEM_H

#include <glib.h>

#define SIM_MEM_HUGE ((gsize)2 << 20) /* the x86-64 and arm64 huge page */

/* A block of `bytes` (not cleared; GLib's g_aligned_alloc: aborts when
 * memory is exhausted, as g_malloc does). */
void *sim_mem_block(gsize bytes);

/* g_realloc(p, bytes), with the whole huge pages of a large result marked
 * as above. */
void *sim_mem_renew(void *p, gsize bytes);

/* How many records of `size` bytes the next block of a pool holds: `first`
 * for the first block (prev 0), then twice the previous block, up to
 * blocks of 2 * SIM_MEM_HUGE bytes (a small run keeps small blocks, a
 * large one gets huge pages). */
gsize sim_mem_next(gsize prev, gsize first, gsize size);

#endif
