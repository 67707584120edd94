/* granularity.c: the minimum effective task granularity (Task Bench's METG) of polygpu from C.
 * Tasks are spin kernels of a fixed duration; "chain": each task read-writes one array (a chain
 * of dependent tasks); "independent": W = number of devices chains side by side (each task
 * read-writes its chain's array). Issued eagerly (one pg_kernel_launch per task) or replayed
 * from a recording of a block of tasks (pg_graph_*). Efficiency = ideal time (tasks / W x
 * duration) / measured time (first submission to the end of pg_runtime_sync); METG(50%) is the
 * smallest duration at which efficiency reaches 0.5 (interpolated between measured durations).
 * Prints CSV rows (runtime,issue,pattern,devices,duration_us,tasks,seconds,efficiency,
 * us_per_task: wall time per task, all chains together), then one METG line per configuration.
 * Usage: granularity [devices] [max_tasks]   (defaults: PG_DEVICES or host:1, 2000) */
#include "polygpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* On GPUs the kernel spins on the SM clock (ticks = clock cycles); on CPU devices on the host
 * clock (ticks = ns). */
static const char *GPU_SRC = "extern \"C\" __global__ void spin(float *a, long long ticks) {\n"
                             "  long long t0 = clock64(); while (clock64() - t0 < ticks) { }\n"
                             "  if (threadIdx.x == 0 && blockIdx.x == 0) a[0] += 1.0f; }\n";
static const char *CPU_SRC =
    "extern \"C\" __global__ void spin(float *a, long long ticks) {\n"
    "  struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);\n"
    "  long long t0 = t.tv_sec * 1000000000LL + t.tv_nsec, now;\n"
    "  do { clock_gettime(CLOCK_MONOTONIC, &t); now = t.tv_sec * 1000000000LL + t.tv_nsec; }\n"
    "  while (now - t0 < ticks);\n"
    "  if (threadIdx.x == 0 && blockIdx.x == 0) a[0] += 1.0f; }\n";

static const double DURATIONS_US[] = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000};
enum { NDUR = sizeof DURATIONS_US / sizeof *DURATIONS_US, MAX_W = PG_MAX_DEVICES, BLOCK = 100 };

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void die(const char *what) {
    fprintf(stderr, "granularity: %s: %s\n", what, pg_last_error());
    exit(1);
}

static pg_runtime *rt;
static pg_kernel *spin;
static pg_array *arr[MAX_W];
static pg_dim3 one = {1, 1, 1};

static void launch(int chain, long long ticks) {
    pg_arg args[] = {pg_arg_array(arr[chain]), pg_arg_int(ticks)};
    if (pg_kernel_launch(spin, one, one, 0, args, 2))
        die("launch");
}

/* Seconds to run `tasks` tasks over w chains, eagerly or replayed in recordings of BLOCK. */
static double run(int replay, int w, int tasks, long long ticks) {
    pg_graph *g = NULL;
    int per = BLOCK - BLOCK % w; /* whole rounds of the w chains per recording */
    if (replay) {
        if (pg_graph_begin(rt))
            die("graph begin");
        for (int i = 0; i < per; i++)
            launch(i % w, ticks);
        if (pg_graph_end(rt, &g))
            die("graph end");
    }
    if (pg_runtime_sync(rt))
        die("sync");
    double t0 = now_s();
    if (replay) {
        for (int done = 0; done < tasks; done += per)
            if (pg_graph_launch(g))
                die("replay");
    } else {
        for (int i = 0; i < tasks; i++)
            launch(i % w, ticks);
    }
    if (pg_runtime_sync(rt))
        die("sync");
    double t = now_s() - t0;
    if (g)
        pg_graph_free(g);
    return t;
}

int main(int argc, char **argv) {
    const char *devices = argc > 1               ? argv[1]
                          : getenv("PG_DEVICES") ? getenv("PG_DEVICES")
                                                 : "host:1";
    int max_tasks = argc > 2 ? atoi(argv[2]) : 2000;
    pg_options o;
    pg_options_init(&o);
    o.devices = devices;
    if (pg_runtime_new(&o, &rt))
        die("runtime");
    pg_device_info info[PG_MAX_DEVICES];
    int ndev = 0;
    if (pg_runtime_devices(rt, info, PG_MAX_DEVICES, &ndev))
        die("devices");
    int gpu = info[0].kind == PG_DEVICE_CUDA;
    if (pg_kernel_new(rt, gpu ? GPU_SRC : CPU_SRC, "spin", NULL, NULL, &spin))
        die("kernel");
    int64_t n = 1;
    for (int i = 0; i < ndev; i++)
        if (pg_array_new(rt, PG_FLOAT32, 1, &n, &arr[i]))
            die("array");
    /* Ticks per microsecond: 1000 on CPU devices (ns); on GPUs measured with one long spin. */
    double per_us = 1000;
    if (gpu) {
        long long probe = 200000000; /* ~0.1 s at 2 GHz */
        run(0, 1, 1, 1000);
        double t = run(0, 1, 1, probe);
        per_us = (double)probe / (t * 1e6);
    }
    /* The devices as a CSV field: "cuda:0,1" is written "cuda:0+1". */
    char label[64];
    snprintf(label, sizeof label, "%s", devices);
    for (char *c = label; *c; c++)
        if (*c == ',')
            *c = '+';
    printf("runtime,issue,pattern,devices,duration_us,tasks,seconds,efficiency,us_per_task\n");
    const char *issue[] = {"eager", "replay"};
    for (int r = 0; r < 2; r++)
        for (int p = 0; p < 2; p++) {
            int w = p ? ndev : 1;
            if (p && ndev == 1)
                continue; /* one chain on one device: the chain */
            double eff[NDUR];
            for (int d = 0; d < NDUR; d++) {
                double dur = DURATIONS_US[d];
                int tasks = (int)fmin(max_tasks, fmax(20 * w, 0.2e6 / dur * w));
                tasks -= tasks % (BLOCK - BLOCK % w);
                if (tasks <= 0)
                    tasks = BLOCK - BLOCK % w;
                long long ticks = (long long)(dur * per_us);
                run(r, w, BLOCK - BLOCK % w, ticks); /* warm-up */
                double t = run(r, w, tasks, ticks);
                eff[d] = (double)tasks / w * dur * 1e-6 / t;
                printf("polygpu-c,%s,%s,%s,%g,%d,%.6f,%.4f,%.3f\n", issue[r],
                       p ? "independent" : "chain", label, dur, tasks, t, eff[d], t / tasks * 1e6);
                fflush(stdout);
            }
            double metg = NAN;
            for (int d = 0; d < NDUR && isnan(metg); d++)
                if (eff[d] >= 0.5)
                    metg = d == 0 ? DURATIONS_US[0]
                                  : exp(log(DURATIONS_US[d - 1]) +
                                        (0.5 - eff[d - 1]) / (eff[d] - eff[d - 1]) *
                                            (log(DURATIONS_US[d]) - log(DURATIONS_US[d - 1])));
            printf("# METG(50%%) polygpu-c %s %s on %s: %s%.2f us\n", issue[r],
                   p ? "independent" : "chain", devices, isnan(metg) ? "> " : "",
                   isnan(metg) ? DURATIONS_US[NDUR - 1] : metg);
        }
    pg_runtime_free(rt);
    return 0;
}
