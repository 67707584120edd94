/* mcl_fig8.c: MCL's Figure 8 scaled to one machine (issue 39): PROCS processes share 2 devices,
 * each running one job — "small" (many 64 x 64 DGEMM tasks) or "large" (fewer 1024 x 1024),
 * sized to take about the same time alone — in every mix PROCS:0 ... 0:PROCS. Two modes:
 * static pinning (process i alone on device i mod 2, share=off: Slurm's GRES) and shared (every
 * process on both devices, share=node: placement sees the others' load). The makespan (all
 * processes started together, until the last ends) per mix and mode goes to the CSV, with
 * static / shared. A third mode, blind (every process on both devices, share=off: each schedules
 * as if the machine were its own), separates what the node adds from what using both devices
 * does.
 *
 * Usage: mcl_fig8 [--gpu] [--procs 4] [--seconds 2] [--out fig8.csv]
 *   --gpu: devices cuda:0 / cuda:1 pinned, cuda shared; else CPU devices: host:1 pinned (each
 *   process its own CPU device), host:2 shared. */
#include "node_common.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { SMALL_N = 64, LARGE_N = 1024 };

typedef struct proc {
    pid_t pid;
    int go, done; /* pipes: start byte to it, its seconds from it */
} proc;

/* A child: make its runtime and arrays, say ready, wait for go, run, report its seconds. */
static proc start(const char *devices, const char *share, int n, int pool, int tasks) {
    int go[2], done[2];
    if (pipe(go) || pipe(done))
        exit(1);
    pid_t pid = fork();
    if (pid == 0) {
        close(go[1]);
        close(done[0]);
        node_job j;
        node_job_init(&j, node_runtime(devices, share, NULL), n, pool);
        node_run(&j, pool, 0); /* warm-up: buffers on the devices, BLAS loaded */
        char c = 'r';
        if (write(done[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
            _exit(1);
        double s = node_run(&j, tasks, 0);
        if (write(done[1], &s, sizeof s) != sizeof s)
            _exit(1);
        pg_runtime_free(j.rt);
        _exit(0);
    }
    close(go[0]);
    close(done[1]);
    return (proc){pid, go[1], done[0]};
}

/* Run the processes together: the makespan from the start byte to the last report. */
static double together(proc *p, int np) {
    char c;
    for (int i = 0; i < np; i++)
        if (read(p[i].done, &c, 1) != 1)
            node_die("a job did not start");
    double t0 = node_now();
    for (int i = 0; i < np; i++)
        if (write(p[i].go, "g", 1) != 1)
            exit(1);
    double last = 0;
    for (int i = 0; i < np; i++) {
        double s;
        if (read(p[i].done, &s, sizeof s) != sizeof s)
            node_die("a job failed");
        last = node_now() - t0;
        int ws;
        waitpid(p[i].pid, &ws, 0);
        close(p[i].go);
        close(p[i].done);
    }
    return last;
}

int main(int argc, char **argv) {
    int gpu = 0, procs = 4;
    double seconds = 2.0;
    const char *out = "fig8.csv";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--gpu"))
            gpu = 1;
        else if (!strcmp(argv[i], "--procs") && i + 1 < argc)
            procs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--out") && i + 1 < argc)
            out = argv[++i];
        else {
            fprintf(stderr, "usage: mcl_fig8 [--gpu] [--procs N] [--seconds S] [--out CSV]\n");
            return 2;
        }
    }
    const char *pin[2] = {gpu ? "cuda:0" : "host:1", gpu ? "cuda:1" : "host:1"};
    const char *shared = gpu ? "cuda" : "host:2";

    /* Calibration: each job alone on one pinned device, so that both take `seconds`; twice,
     * the second time at a tenth of the target, since a first run of a few tasks is mostly
     * start-up. */
    int small = 200, large = 2;
    for (int pass = 0; pass < 2; pass++) {
        double want = pass ? seconds : seconds / 10;
        proc p = start(pin[0], "off", SMALL_N, 16, small);
        double ts = together(&p, 1);
        p = start(pin[0], "off", LARGE_N, 2, large);
        double tl = together(&p, 1);
        small = (int)(small * want / ts) + 1;
        large = (int)(large * want / tl) + 1;
    }
    printf("calibration: %d small tasks (64^3) and %d large (1024^3) take about %.1f s alone\n",
           small, large, seconds);

    FILE *f = fopen(out, "w");
    if (!f) {
        perror(out);
        return 1;
    }
    fprintf(f, "small_jobs,large_jobs,small_tasks,large_tasks,static_s,shared_s,blind_s,speedup\n");
    printf("%-7s %10s %10s %10s %8s\n", "mix", "static s", "shared s", "blind s", "speedup");
    for (int k = procs; k >= 0; k--) {
        double t[3];
        for (int mode = 0; mode < 3; mode++) { /* static, shared, blind */
            proc ps[64];
            for (int i = 0; i < procs; i++) {
                int is_small = i < k;
                ps[i] = start(mode ? shared : pin[i % 2], mode == 1 ? "node" : "off",
                              is_small ? SMALL_N : LARGE_N, is_small ? 16 : 2,
                              is_small ? small : large);
            }
            t[mode] = together(ps, procs);
        }
        printf("%d:%-5d %10.3f %10.3f %10.3f %8.2f\n", k, procs - k, t[0], t[1], t[2], t[0] / t[1]);
        fprintf(f, "%d,%d,%d,%d,%.4f,%.4f,%.4f,%.3f\n", k, procs - k, small, large, t[0], t[1],
                t[2], t[0] / t[1]);
        fflush(stdout);
    }
    fclose(f);
    printf("saved %s\n", out);
    return 0;
}
