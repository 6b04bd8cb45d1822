/* traces/timeline.h - a Chrome / Perfetto trace of a replay: one process per
 * GPU with a track per stream, one process for the busiest links with a
 * track of chunk transfers each and utilisation counters; or of one
 * collective (`conveyor collective --timeline`): its span, then the links. */
#ifndef TRACES_TIMELINE_H
#define TRACES_TIMELINE_H

#include <stdio.h>

#include "models/replay.h"

/* Write the timeline of `res` (recorded with replay_opts.record) to path,
 * through a temporary file renamed into place: a track per GPU stream, one
 * per GPU for its exposed communication (TIMELINE_EXPOSED_TID; slices
 * "exposed: network" or "exposed: inside the server"), and max_links link
 * tracks (the busiest). FALSE with *err on I/O failure. */
gboolean timeline_write(const char *path, const trace *t, const replay_result *res, fabric *f, int max_links,
                        GError **err);

/* Write the timeline of one collective recorded on f (fabric_set_recording
 * before coll_run): a track with the setup (host launch and NCCL's base
 * latency, setup_us; setup_detail, if not NULL, says how it adds up) and
 * then the transfers until total_us, under `label`; and the max_links
 * busiest links with their chunks and utilisation. */
gboolean timeline_write_coll(const char *path, const char *label, double setup_us, const char *setup_detail,
                             double total_us, fabric *f, int max_links, GError **err);

/* The track of a GPU's exposed communication in a replay timeline (the
 * streams' tracks are their ids): TIMELINE_EXPOSED_TID, or one past the
 * largest stream id of the replay where a stream has that id or more. */
#define TIMELINE_EXPOSED_TID 9999
int timeline_exposed_tid(const replay_result *res);

/* s as a JSON string, quoted and escaped, to o (NULL: ""); bytes that are not UTF-8 become
 * U+FFFD. */
void timeline_json_str(FILE *o, const char *s);

#endif
