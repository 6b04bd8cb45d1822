/* traces/json_arena.h - cJSON's allocations in an arena while a large file
 * is parsed.
 *
 * A trace file of half a million operations is ten million cJSON nodes and
 * strings, each a malloc on parsing and a free on cJSON_Delete: measured on
 * a 77 MB native trace (558,272 ops), most of the replay's wall time was the
 * load, and most of the load the allocator (docs/performance.md, "Loading
 * traces"). While an arena is open on a thread, cJSON's allocations on that
 * thread come from large blocks and cJSON's frees of them do nothing; the
 * blocks go back at once when it closes. Other threads, and allocations
 * made before it opened, keep malloc and free (cJSON's hooks are installed
 * once, process-wide, and look at the calling thread's arena).
 *
 * Use: json_arena_init() once before threads start (cli/main.c; open does it
 * too for single-threaded callers), then a = json_arena_open(); parse and
 * read the document; json_arena_close(a), which frees it (cJSON_Delete is
 * only needed when open returned NULL). Nothing cJSON returned while it was
 * open may be used after it closes.
 */
#ifndef TRACES_JSON_ARENA_H
#define TRACES_JSON_ARENA_H

typedef struct json_arena json_arena;

/* Install cJSON's allocation hooks (idempotent, thread-safe). */
void json_arena_init(void);

/* Start sending this thread's cJSON allocations to a new arena; arenas do
 * not nest (NULL when this thread already has one: allocations then go to
 * that one). */
json_arena *json_arena_open(void);

/* Give back everything the arena holds (NULL: nothing). */
void json_arena_close(json_arena *a);

#endif
