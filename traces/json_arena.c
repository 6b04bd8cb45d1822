/* traces/json_arena.c - see json_arena.h. */
#include "json_arena.h"

#include "sim/mem.h"

#include <cjson/cJSON.h>
#include <glib.h>
#include <stdint.h>
#include <stdlib.h>

#define ARENA_FIRST ((gsize)64 << 10) /* bytes of the first block (most documents are small); then doubling... */
#define ARENA_MAX ((gsize)256 << 20) /* ...up to this: a 77 MB trace's 640 MB of nodes in 15 blocks */
#define ARENA_ALIGN 16

struct json_arena {
    GPtrArray *blocks;   /* their starts */
    GArray *ends;        /* uintptr_t: one past each block */
    char *cur;
    gsize left, block;   /* room in the current block; its size */
};

static __thread json_arena *current;

static void *arena_alloc(json_arena *a, size_t n)
{
    n = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (n == 0)
        n = ARENA_ALIGN;
    if (a->left < n) {
        gsize bs = a->block = a->block ? MIN(2 * a->block, ARENA_MAX) : ARENA_FIRST;
        if (bs < n)
            bs = n;
        a->cur = sim_mem_block(bs);
        a->left = bs;
        g_ptr_array_add(a->blocks, a->cur);
        uintptr_t end = (uintptr_t)a->cur + bs;
        g_array_append_val(a->ends, end);
    }
    void *p = a->cur;
    a->cur += n;
    a->left -= n;
    return p;
}

static gboolean arena_owns(const json_arena *a, const void *p)
{
    uintptr_t q = (uintptr_t)p;
    for (guint i = a->blocks->len; i-- > 0;) /* the latest block first: most frees are there */
        if (q >= (uintptr_t)g_ptr_array_index(a->blocks, i) && q < g_array_index(a->ends, uintptr_t, i))
            return TRUE;
    return FALSE;
}

static void *hook_malloc(size_t n)
{
    json_arena *a = current;
    return a ? arena_alloc(a, n) : malloc(n);
}

static void hook_free(void *p)
{
    json_arena *a = current;
    if (p && (!a || !arena_owns(a, p)))
        free(p);
}

void json_arena_init(void)
{
    static gsize done = 0;
    if (g_once_init_enter(&done)) {
        cJSON_Hooks h = {.malloc_fn = hook_malloc, .free_fn = hook_free};
        cJSON_InitHooks(&h);
        g_once_init_leave(&done, 1);
    }
}

json_arena *json_arena_open(void)
{
    json_arena_init();
    if (current)
        return NULL;
    json_arena *a = g_new0(json_arena, 1);
    a->blocks = g_ptr_array_new_with_free_func(g_aligned_free);
    a->ends = g_array_new(FALSE, FALSE, sizeof(uintptr_t));
    current = a;
    return a;
}

void json_arena_close(json_arena *a)
{
    if (!a)
        return;
    if (current == a)
        current = NULL;
    g_ptr_array_unref(a->blocks);
    g_array_free(a->ends, TRUE);
    g_free(a);
}
