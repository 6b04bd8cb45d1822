/* sim/hash.h - a 64-bit key hash for GLib hash tables.
 *
 * g_int64_hash folds a key as (low 32 bits) ^ (high 32 bits): keys packed
 * as (a << 32 | b) or (group << 40 | seq) then collide whenever a ^ b (or
 * group << 8 ^ seq) agree, and lookups walk long chains (on a 1,024-GPU
 * Llama 3 step, trace validation spent 55% of its time in them).  This
 * multiplies by 2^64 / phi and keeps the high half, which every key bit
 * reaches.  Use with g_int64_equal.
 */
#ifndef SIM_HASH_H
#define SIM_HASH_H

#include <glib.h>

static inline guint sim_int64_hash(gconstpointer k)
{
    guint64 v = *(const guint64 *)k * G_GUINT64_CONSTANT(0x9E3779B97F4A7C15);
    return (guint)(v >> 32);
}

#endif
