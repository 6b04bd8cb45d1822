/* sim/mem.c - storage for large pools and arrays (sim/mem.h). */
#include "sim/mem.h"

#include <stdint.h>
#include <sys/mman.h>

static void advise(void *p, gsize bytes)
{
#ifdef MADV_HUGEPAGE
    uintptr_t lo = ((uintptr_t)p + SIM_MEM_HUGE - 1) & ~(uintptr_t)(SIM_MEM_HUGE - 1);
    uintptr_t hi = ((uintptr_t)p + bytes) & ~(uintptr_t)(SIM_MEM_HUGE - 1);
    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* advice only: a refusal changes nothing */
#else
    (void)p;
    (void)bytes;
#endif
}

void *sim_mem_block(gsize bytes)
{
    if (bytes < SIM_MEM_HUGE)
        return g_aligned_alloc(1, bytes, 64); /* a cache line */
    bytes = (bytes + SIM_MEM_HUGE - 1) & ~(SIM_MEM_HUGE - 1); /* whole huge pages */
    void *p = g_aligned_alloc(1, bytes, SIM_MEM_HUGE);
    advise(p, bytes);
    return p;
}

void *sim_mem_renew(void *p, gsize bytes)
{
    p = g_realloc(p, bytes);
    if (bytes >= 2 * SIM_MEM_HUGE)
        advise(p, bytes);
    return p;
}

gsize sim_mem_next(gsize prev, gsize first, gsize size)
{
    gsize most = 2 * SIM_MEM_HUGE / size;
    gsize n = prev == 0 ? first : 2 * prev;
    return n < most ? n : most > prev ? most : prev;
}
