/* starpu_compare.c: empty tasks on CPU devices, polygpu against StarPU (issue "CPU devices at
 * StarPU's pace"). Two cases: "chain" (each task read-writes one shared vector) and
 * "independent" (each task only reads one shared vector), N tasks, on 1 and 2 CPU devices
 * (polygpu host:D; StarPU D CPU workers, eager scheduler). Per case: median µs per task over
 * the runs (submission to the end of the wait), the submission alone, threads the process
 * gained, and context switches per task (getrusage, voluntary + involuntary, whole process).
 * The StarPU half is built only when pkg-config finds starpu-1.3 (libstarpu-dev).
 * Usage: starpu_compare [N [runs]]   (defaults 100000 and 5) */
#include "polygpu.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#ifdef PG_HAVE_STARPU
#include <starpu.h>
#endif

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static long threads_now(void) {
    DIR *d = opendir("/proc/self/task");
    long n = 0;
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static long switches_now(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_nvcsw + u.ru_nivcsw;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

typedef struct result {
    double per_task_us, submit_us, switches_per_task;
    long threads_gained;
} result;

static void print(const char *runtime, const char *cas, int devices, int n, result r) {
    printf("| %s | %s | %d | %d | %.2f | %.2f | %ld | %.3f |\n", runtime, cas, devices, n,
           r.per_task_us, r.submit_us, r.threads_gained, r.switches_per_task);
    fflush(stdout);
}

static void die(const char *what) {
    fprintf(stderr, "starpu_compare: %s: %s\n", what, pg_last_error());
    exit(1);
}

/* ---- polygpu */

static result polygpu_case(int devices, int chain, int n, int runs) {
    char spec[16];
    snprintf(spec, sizeof spec, "host:%d", devices);
    long threads0 = threads_now();
    pg_options o;
    pg_options_init(&o);
    o.devices = spec;
    pg_runtime *rt;
    pg_kernel *k;
    pg_array *v;
    int64_t len = 1024;
    if (pg_runtime_new(&o, &rt) ||
        pg_kernel_new(rt,
                      chain ? "extern \"C\" __global__ void touch(float *v) { }"
                            : "extern \"C\" __global__ void touch(const float *v) { }",
                      "touch", NULL, NULL, &k) ||
        pg_array_new(rt, PG_FLOAT32, 1, &len, &v))
        die("setup");
    pg_dim3 one = {1, 1, 1};
    pg_arg args[] = {pg_arg_array(v)};
    for (int i = 0; i < 1000; i++) /* warm-up: buffers, streams, threads */
        if (pg_kernel_launch(k, one, one, 0, args, 1))
            die("launch");
    pg_runtime_sync(rt);
    double *total = malloc(sizeof(double) * (size_t)runs), *sub = malloc(sizeof(double) * runs);
    long sw0 = switches_now();
    for (int r = 0; r < runs; r++) {
        double t0 = now_s();
        for (int i = 0; i < n; i++)
            if (pg_kernel_launch(k, one, one, 0, args, 1))
                die("launch");
        double t1 = now_s();
        if (pg_runtime_sync(rt))
            die("sync");
        double t2 = now_s();
        total[r] = (t2 - t0) / n * 1e6;
        sub[r] = (t1 - t0) / n * 1e6;
    }
    result res = {median(total, runs), median(sub, runs),
                  (double)(switches_now() - sw0) / ((double)n * runs), threads_now() - threads0};
    pg_runtime_free(rt);
    free(total);
    free(sub);
    return res;
}

/* ---- StarPU */

#ifdef PG_HAVE_STARPU
static void empty_cpu(void *buffers[], void *arg) {
    (void)buffers;
    (void)arg;
}

static struct starpu_codelet cl_rw = {
    .cpu_funcs = {empty_cpu}, .nbuffers = 1, .modes = {STARPU_RW}};
static struct starpu_codelet cl_r = {.cpu_funcs = {empty_cpu}, .nbuffers = 1, .modes = {STARPU_R}};

static result starpu_case(int devices, int chain, int n, int runs) {
    long threads0 = threads_now();
    struct starpu_conf conf;
    starpu_conf_init(&conf);
    conf.ncpus = devices;
    conf.ncuda = 0;
    conf.nopencl = 0;
    conf.sched_policy_name = "eager";
    if (starpu_init(&conf)) {
        fprintf(stderr, "starpu_init failed\n");
        exit(1);
    }
    static float data[1024];
    starpu_data_handle_t h;
    starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)data, 1024, sizeof(float));
    struct starpu_codelet *cl = chain ? &cl_rw : &cl_r;
    for (int i = 0; i < 1000; i++)
        starpu_task_insert(cl, chain ? STARPU_RW : STARPU_R, h, 0);
    starpu_task_wait_for_all();
    double *total = malloc(sizeof(double) * (size_t)runs), *sub = malloc(sizeof(double) * runs);
    long sw0 = switches_now();
    for (int r = 0; r < runs; r++) {
        double t0 = now_s();
        for (int i = 0; i < n; i++)
            starpu_task_insert(cl, chain ? STARPU_RW : STARPU_R, h, 0);
        double t1 = now_s();
        starpu_task_wait_for_all();
        double t2 = now_s();
        total[r] = (t2 - t0) / n * 1e6;
        sub[r] = (t1 - t0) / n * 1e6;
    }
    result res = {median(total, runs), median(sub, runs),
                  (double)(switches_now() - sw0) / ((double)n * runs), threads_now() - threads0};
    starpu_data_unregister(h);
    starpu_shutdown();
    free(total);
    free(sub);
    return res;
}
#endif

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 100000, runs = argc > 2 ? atoi(argv[2]) : 5;
    if (n <= 0 || runs <= 0) {
        fprintf(stderr, "usage: starpu_compare [N [runs]]\n");
        return 1;
    }
    printf("| runtime | case | CPU devices / workers | N | µs per task | submission µs per task | "
           "threads gained | context switches per task |\n| --- | --- | --- | --- | --- | --- | "
           "--- | --- |\n");
    for (int chain = 1; chain >= 0; chain--)
        for (int d = 1; d <= 2; d++) {
            print("polygpu", chain ? "chain" : "independent", d, n,
                  polygpu_case(d, chain, n, runs));
#ifdef PG_HAVE_STARPU
            print("StarPU eager", chain ? "chain" : "independent", d, n,
                  starpu_case(d, chain, n, runs));
#endif
        }
#ifndef PG_HAVE_STARPU
    printf("(StarPU not built in: install libstarpu-dev, e.g. PG_INSTALL_STARPU=1 "
           "scripts/install-deps.sh, and reconfigure)\n");
#endif
    return 0;
}
