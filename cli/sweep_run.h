/* cli/sweep_run.h - run a sweep's points and write the CSV: a GLib thread
 * pool on one machine, or (built with make MPI=1) a work queue over MPI
 * ranks where rank 0 hands out points and writes. Either way rows come out
 * in grid order, flushed one by one, so the CSV is the same whatever the
 * thread or rank count and a killed run leaves a valid prefix. */
#ifndef CLI_SWEEP_RUN_H
#define CLI_SWEEP_RUN_H

#include <stdbool.h>

#include "traces/sweep_spec.h"

typedef struct {
    const sweep_spec *spec;
    const char *out_path; /* NULL: stdout (no --resume) */
    int threads;          /* >= 1 */
    bool resume;          /* skip the points already in out_path */
    bool progress;        /* progress line on stderr (a terminal) */
} sweep_run_opts;

/* Run every point not yet in the CSV with o->threads threads. Prints its
 * own errors; returns the exit code: 0, 2 (a point failed, or the existing
 * CSV does not match the spec) or 1 (a write failed). */
int sweep_run_threads(const sweep_run_opts *o);

/* `conveyor sweep --plot X,Y[,SERIES] csv -o svg` (cli/sweep_plot.c):
 * one gnuplot line per SERIES value. Returns the exit code: 2 for a
 * missing column, a non-numeric Y or a bad CSV; 1 if gnuplot fails. */
int sweep_plot(const char *cols, const char *csv_path, const char *svg_path);

#ifdef CONVEYOR_MPI
/* The same over MPI_COMM_WORLD (size >= 2): rank 0 collects and writes,
 * every other rank runs the points it is handed. Every rank calls it with
 * the same spec; returns the exit code (rank 0's is the one that counts). */
int sweep_run_mpi(const sweep_run_opts *o, int rank, int size);
#endif

#endif
