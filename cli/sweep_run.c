/* cli/sweep_run.c - see sweep_run.h.
 *
 * Workers (pool threads or MPI ranks) run points and produce finished CSV
 * rows; one collector (the main thread or rank 0) hands them to the ordered
 * writer, keeps the progress line and remembers the first failure in grid
 * order. After a failure no new point starts; points in flight finish and
 * the rows before the failed point are still written.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>

#ifdef CONVEYOR_MPI
#include <mpi.h>
#endif

#include "cli.h"
#include "sweep_run.h"
#include "traces/tracefile.h"

typedef struct {
    const sweep_run_opts *o;
    FILE *f;
    sweep_csv_writer *w;
    size_t first, todo, got;
    gint64 t0_us;
    char *error;          /* message of the lowest failed point */
    size_t error_index;
    bool write_failed;
    char *work;           /* OUT.partial, where rows are appended until the end */
} collector;

/* --resume: check the rows already in the output and return how many
 * points they hold, or -1 after printing the error. out: -o's path; work:
 * OUT.partial, or NULL (out is written in place). Rows are read from
 * OUT.partial when an interrupted sweep left one, else from a copy of OUT
 * made as OUT.partial. A copy that fails the check is removed and the error
 * names OUT (a stale copy read before OUT made a fixed OUT fail again). */
static long resume_rows(const sweep_spec *s, const char *out, const char *work)
{
    GError *err = NULL;
    bool copied = false;
    if (work && !g_file_test(work, G_FILE_TEST_EXISTS) && g_file_test(out, G_FILE_TEST_EXISTS)) {
        g_autofree char *text = NULL;
        gsize len = 0;
        if (!g_file_get_contents(out, &text, &len, &err) || !g_file_set_contents(work, text, (gssize)len, &err)) {
            cli_fail(err);
            return -1;
        }
        copied = true;
    }
    long done = sweep_csv_resume(s, work ? work : out, &err);
    if (done >= 0)
        return done;
    if (copied) {
        g_unlink(work);
        if (g_str_has_prefix(err->message, work)) { /* "OUT.partial:4: ..." is line 4 of OUT */
            char *m = g_strconcat(out, err->message + strlen(work), NULL);
            g_free(err->message);
            err->message = m;
        }
        cli_fail(err);
    } else {
        cli_fail(err);
        if (work && g_file_test(out, G_FILE_TEST_EXISTS)) /* both there: say which one was read */
            fprintf(stderr, "conveyor sweep: %s is what an interrupted sweep left, and --resume reads it before "
                            "%s: remove it to resume from %s\n", work, out, out);
    }
    return -1;
}

/* Open the output (resume: check and extend it), write the header if the
 * file is new. Returns 0 or an exit code after printing the error. */
static int collector_open(collector *c, const sweep_run_opts *o)
{
    const sweep_spec *s = o->spec;
    memset(c, 0, sizeof *c);
    c->o = o;
    c->t0_us = g_get_monotonic_time();
    long done = 0;
    /* Rows go to OUT.partial (appended and flushed as points finish) and
     * the file is renamed to OUT when the sweep ends, so a crash or kill
     * never replaces a good OUT with a half-written one; --resume carries
     * on from OUT.partial (or from OUT, copied first). */
    if (o->out_path && tracefile_is_special(o->out_path)) { /* /dev/null, a FIFO: written in place */
        if (o->resume) {
            fprintf(stderr, "conveyor sweep: %s: --resume needs a regular file\n", o->out_path);
            return EXIT_BADINPUT;
        }
    } else if (o->out_path && g_file_test(o->out_path, G_FILE_TEST_IS_DIR)) {
        /* (checked now: the rename at the end would fail after the whole grid ran) */
        fprintf(stderr, "conveyor sweep: -o %s: is a directory; give the path of the results CSV\n", o->out_path);
        return EXIT_BADINPUT;
    } else if (o->out_path) {
        c->work = g_strdup_printf("%s.partial", o->out_path);
    }
    if (o->resume && (done = resume_rows(s, o->out_path, c->work)) < 0) {
        g_clear_pointer(&c->work, g_free);
        return EXIT_BADINPUT;
    }
    /* (no .partial only for a special path, where --resume was refused above) */
    c->f = !o->out_path ? stdout : c->work ? fopen(c->work, o->resume ? "a" : "w") : tracefile_open_write(o->out_path);
    if (!c->f) {
        fprintf(stderr, "conveyor sweep: %s: %s\n", c->work ? c->work : o->out_path, g_strerror(errno));
        g_clear_pointer(&c->work, g_free);
        return EXIT_BADINPUT;
    }
    bool fresh = true;
    if (o->resume && fseek(c->f, 0, SEEK_END) == 0)
        fresh = ftell(c->f) == 0;
    if (fresh) {
        g_autofree char *h = sweep_csv_header(s);
        if (fputs(h, c->f) == EOF || fflush(c->f) != 0)
            c->write_failed = true;
    }
    c->first = (size_t)done;
    c->todo = s->npoints - c->first;
    c->w = sweep_csv_writer_new(c->f, c->first, s->npoints);
    return EXIT_OK;
}

static void collector_progress(collector *c, bool final)
{
    if (!c->o->progress)
        return;
    double el = (double)(g_get_monotonic_time() - c->t0_us) / 1e6;
    fprintf(stderr, "\rsweep: %zu/%zu points, %.1f s elapsed", c->first + c->got, c->o->spec->npoints, el);
    if (c->got && c->got < c->todo)
        fprintf(stderr, ", ~%.1f s left   ", el / (double)c->got * (double)(c->todo - c->got));
    else
        fprintf(stderr, "              ");
    if (final)
        fputc('\n', stderr);
    fflush(stderr);
}

/* One finished point: row (owned, or NULL) or error (owned). */
static void collector_put(collector *c, size_t index, char *row, char *error)
{
    c->got++;
    if (error) {
        if (!c->error || index < c->error_index) {
            g_free(c->error);
            c->error = error;
            c->error_index = index;
        } else {
            g_free(error);
        }
        return;
    }
    if (c->error && index > c->error_index) {
        g_free(row); /* after the failure: never written */
        return;
    }
    if (!c->write_failed && !sweep_csv_writer_put(c->w, index, row))
        c->write_failed = true;
    else if (c->write_failed)
        g_free(row);
}

static bool collector_failed(const collector *c) { return c->error || c->write_failed; }

static int collector_close(collector *c)
{
    collector_progress(c, true);
    int rc = EXIT_OK;
    if (c->write_failed) {
        fprintf(stderr, "conveyor sweep: %s: write failed: %s\n", c->o->out_path ? c->o->out_path : "stdout",
                g_strerror(errno));
        rc = EXIT_INTERNAL;
    } else if (c->error) {
        fprintf(stderr, "conveyor sweep: %s\n", c->error);
        if (c->o->out_path)
            fprintf(stderr, "conveyor sweep: %s holds the %zu points before it; fix the spec and rerun with --resume\n",
                    c->o->out_path, sweep_csv_writer_next(c->w));
        rc = EXIT_BADINPUT;
    }
    if (c->f && tracefile_close_write(c->f) != 0 && rc == EXIT_OK) {
        fprintf(stderr, "conveyor sweep: %s: %s\n", c->work ? c->work : c->o->out_path, g_strerror(errno));
        rc = EXIT_INTERNAL;
    }
    /* finished, or stopped by a failing point: the rows so far become OUT */
    if (c->work && !c->write_failed && rename(c->work, c->o->out_path) != 0) {
        fprintf(stderr, "conveyor sweep: %s: %s\n", c->o->out_path, g_strerror(errno));
        rc = EXIT_INTERNAL;
    }
    g_free(c->work);
    sweep_csv_writer_free(c->w);
    g_free(c->error);
    return rc;
}

/* Does message m blame parameter key (value val at the point)? how 0: m
 * starts with "key:" (the bases' own checks: "nodes: expected ..."); 1: m
 * names it as an option ("--set K: ..." for "set.K", "--nodes 2 needs",
 * "--dtype 'fp7'"); 2: m quotes the value ("unknown topology 'x'") or
 * starts with it (a trace file's "path: ..."). */
static bool blames(const char *m, int how, const char *key, const char *val)
{
    size_t kl = strlen(key), vl = strlen(val);
    if (how == 0)
        return !strncmp(m, key, kl) && m[kl] == ':';
    if (how == 2) {
        g_autofree char *quoted = g_strdup_printf("'%s'", val);
        return strstr(m, quoted) || (!strncmp(m, val, vl) && m[vl] == ':');
    }
    if (g_str_has_prefix(key, "set.")) {
        g_autofree char *said = g_strdup_printf("--set %s:", key + 4);
        return strstr(m, said) != NULL;
    }
    g_autofree char *opt = g_strdup_printf("--%s", key);
    g_strdelimit(opt + 2, "_", '-'); /* launch_us: --launch-us */
    for (const char *f = strstr(m, opt); f; f = strstr(f + 1, opt)) {
        char next = f[strlen(opt)];
        if (!g_ascii_isalnum(next) && next != '-' && next != '_')
            return true;
    }
    return false;
}

/* Where in the spec the parameter that message m (of point index) blames
 * comes from: "$.vary.KEY", "$.args.KEY", or "$.args" when none is named
 * (a required one is missing). The surest sign first (blames), axes
 * before fixed args. Caller g_free's. */
static char *error_where(const sweep_spec *s, size_t index, const char *m)
{
    for (int how = 0; how < 3; how++) {
        for (guint a = 0; a < s->axis_names->len; a++)
            if (blames(m, how, s->axis_names->pdata[a], sweep_spec_axis_value(s, index, a)))
                return g_strdup_printf("$.vary.%s", (char *)s->axis_names->pdata[a]);
        for (guint a = 0; a < s->arg_keys->len; a++)
            if (blames(m, how, s->arg_keys->pdata[a], s->arg_vals->pdata[a]))
                return g_strdup_printf("$.args.%s", (char *)s->arg_keys->pdata[a]);
        for (guint a = 0; how == 1 && a < s->arg_sets->len; a++) { /* "K=V" of args.set: "--set K:" */
            const char *kv = s->arg_sets->pdata[a];
            g_autofree char *key = g_strdup_printf("set.%.*s", (int)strcspn(kv, "="), kv);
            if (blames(m, how, key, ""))
                return g_strdup_printf("$.args.set[%u]", a);
        }
    }
    return g_strdup("$.args");
}

/* Run point `index`: a finished CSV row in *row, or a message naming the
 * point in *error. Touches nothing shared but the read-only spec. */
static void run_point(const sweep_spec *s, size_t index, char **row, char **error)
{
    sweep_point *p = sweep_spec_point(s, index);
    size_t nfig = s->fig->len;
    char **figs = g_new0(char *, nfig + 1);
    GError *err = NULL;
    *row = *error = NULL;
    if (s->base->run(p, (const int *)(void *)s->fig->data, nfig, figs, &err)) {
        *row = sweep_csv_row(s, index, figs);
    } else {
        GString *d = g_string_new(NULL);
        for (guint a = 0; a < s->axis_names->len; a++)
            g_string_append_printf(d, "%s%s=%s", a ? ", " : "", (char *)s->axis_names->pdata[a],
                                   sweep_spec_axis_value(s, index, a));
        const char *m = err ? err->message : "failed";
        g_autofree char *where = error_where(s, index, m);
        *error = g_strdup_printf("%s: %s: point %zu (%s): %s", s->file, where, index, d->len ? d->str : "the only point",
                                 m);
        g_string_free(d, TRUE);
        g_clear_error(&err);
    }
    g_strfreev(figs);
    sweep_point_free(p);
}

/* ---- threads ---------------------------------------------------------- */

typedef struct {
    size_t index;
    char *row, *error;
    bool skipped;
} result;

typedef struct {
    const sweep_spec *s;
    GMutex mu;
    GCond cv;
    GQueue done; /* result*, finished and not yet collected */
    size_t skip_from; /* points >= this are not started (a failure before them) */
} pool_state;

static void pool_work(gpointer data, gpointer user)
{
    pool_state *ps = user;
    result *r = g_new0(result, 1);
    r->index = GPOINTER_TO_SIZE(data) - 1;
    g_mutex_lock(&ps->mu);
    r->skipped = r->index >= ps->skip_from;
    g_mutex_unlock(&ps->mu);
    if (!r->skipped)
        run_point(ps->s, r->index, &r->row, &r->error);
    g_mutex_lock(&ps->mu);
    g_queue_push_tail(&ps->done, r);
    g_cond_signal(&ps->cv);
    g_mutex_unlock(&ps->mu);
}

int sweep_run_threads(const sweep_run_opts *o)
{
    collector c;
    int rc = collector_open(&c, o);
    if (rc != EXIT_OK)
        return rc;
    pool_state ps = {.s = o->spec, .skip_from = SIZE_MAX};
    g_mutex_init(&ps.mu);
    g_cond_init(&ps.cv);
    g_queue_init(&ps.done);
    GError *err = NULL;
    GThreadPool *pool = g_thread_pool_new(pool_work, &ps, o->threads, TRUE, &err);
    if (!pool) {
        fprintf(stderr, "conveyor sweep: cannot start %d threads: %s\n", o->threads, err->message);
        g_error_free(err);
        collector_close(&c);
        return EXIT_INTERNAL;
    }
    for (size_t i = c.first; i < o->spec->npoints; i++)
        g_thread_pool_push(pool, GSIZE_TO_POINTER(i + 1), NULL);
    size_t received = 0;
    while (received < c.todo) {
        g_mutex_lock(&ps.mu);
        gint64 until = g_get_monotonic_time() + 250 * G_TIME_SPAN_MILLISECOND;
        while (g_queue_is_empty(&ps.done) && g_get_monotonic_time() < until)
            g_cond_wait_until(&ps.cv, &ps.mu, until);
        GQueue got = ps.done;
        g_queue_init(&ps.done);
        g_mutex_unlock(&ps.mu);
        for (result *r; (r = g_queue_pop_head(&got)); g_free(r)) {
            received++;
            if (r->skipped)
                continue;
            collector_put(&c, r->index, r->row, r->error);
        }
        if (collector_failed(&c)) {
            g_mutex_lock(&ps.mu);
            ps.skip_from = c.write_failed ? 0 : c.error_index + 1;
            g_mutex_unlock(&ps.mu);
        }
        collector_progress(&c, false);
    }
    g_thread_pool_free(pool, FALSE, TRUE);
    g_mutex_clear(&ps.mu);
    g_cond_clear(&ps.cv);
    return collector_close(&c);
}

/* ---- MPI --------------------------------------------------------------- */
#ifdef CONVEYOR_MPI

enum { TAG_RESULT = 1, TAG_WORK = 2 };

/* A worker's message to rank 0: 8-byte index (-1: first request), one byte
 * ok (1) / failed (0), then the row or the error text. It also asks for the
 * next point. */
static void mpi_send_result(long long index, const char *row, const char *error)
{
    const char *text = row ? row : error ? error : "";
    size_t tl = strlen(text), n = sizeof index + 1 + tl;
    char *buf = g_malloc(n);
    memcpy(buf, &index, sizeof index);
    buf[sizeof index] = row ? 1 : 0;
    memcpy(buf + sizeof index + 1, text, tl);
    MPI_Send(buf, (int)n, MPI_CHAR, 0, TAG_RESULT, MPI_COMM_WORLD);
    g_free(buf);
}

static void mpi_worker(const sweep_spec *s)
{
    long long index = -1;
    mpi_send_result(-1, NULL, NULL);
    for (;;) {
        MPI_Recv(&index, 1, MPI_LONG_LONG, 0, TAG_WORK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (index < 0)
            break;
        char *row, *error;
        run_point(s, (size_t)index, &row, &error);
        mpi_send_result(index, row, error);
        g_free(row);
        g_free(error);
    }
}

/* Rank 0: answer each message with the next point (or -1 = stop) until
 * every worker has been told to stop; collect rows in between. When setup
 * failed (rc != 0) every worker is stopped at its first request. */
static int mpi_root(const sweep_run_opts *o, int size)
{
    collector c;
    int rc = collector_open(&c, o);
    size_t next = rc == EXIT_OK ? c.first : o->spec->npoints;
    int active = size - 1;
    while (active > 0) {
        MPI_Status st;
        int n = 0;
        MPI_Probe(MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_CHAR, &n);
        char *buf = g_malloc((size_t)n + 1);
        MPI_Recv(buf, n, MPI_CHAR, st.MPI_SOURCE, TAG_RESULT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        buf[n] = 0;
        long long index;
        g_assert((size_t)n >= sizeof index + 1);
        memcpy(&index, buf, sizeof index);
        if (index >= 0 && rc == EXIT_OK) {
            char *text = g_strdup(buf + sizeof index + 1);
            bool ok = buf[sizeof index] == 1;
            collector_put(&c, (size_t)index, ok ? text : NULL, ok ? NULL : text);
            collector_progress(&c, false);
        }
        g_free(buf);
        long long give = -1;
        if (rc == EXIT_OK && !collector_failed(&c) && next < o->spec->npoints)
            give = (long long)next++;
        else
            active--;
        MPI_Send(&give, 1, MPI_LONG_LONG, st.MPI_SOURCE, TAG_WORK, MPI_COMM_WORLD);
    }
    return rc == EXIT_OK ? collector_close(&c) : rc;
}

int sweep_run_mpi(const sweep_run_opts *o, int rank, int size)
{
    g_assert(size >= 2);
    if (rank == 0)
        return mpi_root(o, size);
    mpi_worker(o->spec);
    return EXIT_OK;
}

#endif
