/* mcl_fig7.c: MCL's Figure 7 (issue 39): one process's stream of 64 x 64 DGEMM tasks with fresh
 * inputs (A and B written from the host before each task), asynchronous (launch all, sync at
 * the end) against synchronous (execution=sync: each call returns when it is done), on 1..D
 * devices. Tasks per second go to the CSV.
 *
 * Usage: mcl_fig7 [--gpu] [--devices D] [--tasks 20000] [--out fig7.csv]
 *   --gpu: cuda:0, cuda:0,1, ...; else CPU devices host:1 .. host:D (D default 4). */
#include "node_common.h"

#include <string.h>

int main(int argc, char **argv) {
    int gpu = 0, maxdev = 4, tasks = 20000;
    const char *out = "fig7.csv";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--gpu"))
            gpu = 1;
        else if (!strcmp(argv[i], "--devices") && i + 1 < argc)
            maxdev = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tasks") && i + 1 < argc)
            tasks = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--out") && i + 1 < argc)
            out = argv[++i];
        else {
            fprintf(stderr, "usage: mcl_fig7 [--gpu] [--devices D] [--tasks N] [--out CSV]\n");
            return 2;
        }
    }
    FILE *f = fopen(out, "w");
    if (!f) {
        perror(out);
        return 1;
    }
    fprintf(f, "devices,mode,tasks,seconds,tasks_per_s,tasks_per_s_per_device\n");
    printf("%-8s %-6s %12s %14s\n", "devices", "mode", "tasks/s", "per device");
    for (int d = 1; d <= maxdev; d *= 2) {
        char spec[128];
        if (gpu) {
            int len = snprintf(spec, sizeof spec, "cuda:0");
            for (int g = 1; g < d; g++)
                len += snprintf(spec + len, sizeof spec - (size_t)len, ",%d", g);
        } else {
            snprintf(spec, sizeof spec, "host:%d", d);
        }
        double rate[2];
        for (int mode = 0; mode < 2; mode++) {
            node_job j;
            node_job_init(&j, node_runtime(spec, "node", mode ? "sync" : "async"), 64, 256);
            node_run(&j, 512, 1);             /* warm-up */
            int n = mode ? tasks / 4 : tasks; /* the synchronous stream is slower */
            double s = node_run(&j, n, 1);
            rate[mode] = n / s;
            fprintf(f, "%d,%s,%d,%.4f,%.1f,%.1f\n", d, mode ? "sync" : "async", n, s, rate[mode],
                    rate[mode] / d);
            printf("%-8d %-6s %12.0f %14.0f\n", d, mode ? "sync" : "async", rate[mode],
                   rate[mode] / d);
            fflush(stdout);
            pg_runtime_free(j.rt);
        }
        printf("%-8d async / sync %.2f\n", d, rate[0] / rate[1]);
    }
    fclose(f);
    printf("saved %s\n", out);
    return 0;
}
