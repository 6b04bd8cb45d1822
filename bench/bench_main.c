/* bench/bench_main.c - the `make bench` driver: runs every case in a child
 * process, prints a table and writes a JSON array of records
 * {name, params, events, wall_s, events_per_s, peak_rss_kb}. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

static const bench_case *const tables[] = {bench_engine_cases, bench_fabric_cases, bench_coll_cases,
                                           bench_replay_cases, bench_scale_cases};

static int run_child(const bench_case *c, bench_result *r, long *rss_kb)
{
    int fd[2];
    if (pipe(fd))
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        close(fd[0]);
        bench_result res = {0};
        int rc = c->run(c->arg, &res);
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        long kb = ru.ru_maxrss;
        if (write(fd[1], &res, sizeof res) != sizeof res || write(fd[1], &kb, sizeof kb) != sizeof kb)
            _exit(3);
        _exit(rc ? 1 : 0);
    }
    close(fd[1]);
    ssize_t a = read(fd[0], r, sizeof *r);
    ssize_t b = read(fd[0], rss_kb, sizeof *rss_kb);
    close(fd[0]);
    int st;
    waitpid(pid, &st, 0);
    if (a != sizeof *r || b != sizeof *rss_kb || !WIFEXITED(st) || WEXITSTATUS(st))
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 2 || (argc > 1 && argv[1][0] == '-')) { /* e.g. --help: not a path to write over */
        fprintf(stderr, "usage: %s [RESULTS.json]  (make bench; default build/bench.json)\n", argv[0]);
        return 2;
    }
    const char *json_path = argc > 1 ? argv[1] : "build/bench.json";
    const char *only = getenv("BENCH_ONLY");
    FILE *js = fopen(json_path, "w");
    if (!js) {
        perror(json_path);
        return 1;
    }
    fprintf(js, "[\n");
    printf("%-34s %-28s %12s %9s %10s %9s  %s\n", "benchmark", "params", "events", "wall_s",
           "Mevents/s", "rss_MB", "note");
    int first = 1, failed = 0;
    for (size_t t = 0; t < sizeof tables / sizeof *tables; t++) {
        for (const bench_case *c = tables[t]; c->name; c++) {
            if (only && !strstr(c->name, only))
                continue;
            bench_result r;
            long kb = 0;
            fflush(stdout);
            if (run_child(c, &r, &kb)) {
                printf("%-34s %-28s FAILED\n", c->name, c->params_json);
                failed++;
                continue;
            }
            double eps = r.wall_s > 0 ? r.events / r.wall_s : 0;
            printf("%-34s %-28s %12llu %9.3f %10.2f %9.1f  %s\n", c->name, c->params_json,
                   (unsigned long long)r.events, r.wall_s, eps / 1e6, kb / 1024.0, r.note);
            fprintf(js,
                    "%s  {\"name\": \"%s\", \"params\": %s, \"events\": %llu, \"wall_s\": %.6f, "
                    "\"events_per_s\": %.0f, \"peak_rss_kb\": %ld, \"sim_s\": %.9g}",
                    first ? "" : ",\n", c->name, c->params_json, (unsigned long long)r.events,
                    r.wall_s, eps, kb, r.sim_s);
            first = 0;
        }
    }
    fprintf(js, "\n]\n");
    fclose(js);
    printf("wrote %s\n", json_path);
    return failed ? 1 : 0;
}
