/* node_common.h: the DGEMM jobs of the node benchmarks (MCL's Figures 7 and 8): a stream of
 * n x n float64 GEMM tasks (the built-in task gemm_f64: OpenBLAS on CPU devices, cuBLAS on
 * GPUs) over a pool of array triples, each task C_j = A_j B_j. */
#ifndef PG_NODE_COMMON_H
#define PG_NODE_COMMON_H

#include "polygpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double node_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void node_die(const char *what) {
    fprintf(stderr, "%s: %s\n", what, pg_last_error());
    exit(1);
}

typedef struct node_job {
    pg_runtime *rt;
    pg_kernel *gemm;
    int n, pool;
    pg_array **a, **b, **c;
    double *host; /* n * n values for fresh inputs */
} node_job;

static pg_runtime *node_runtime(const char *devices, const char *share, const char *execution) {
    pg_options o;
    pg_options_init(&o);
    if (pg_options_set(&o, "devices", devices) || pg_options_set(&o, "share", share) ||
        (execution && pg_options_set(&o, "execution", execution)))
        node_die("options");
    pg_runtime *rt = NULL;
    if (pg_runtime_new(&o, &rt))
        node_die("runtime");
    return rt;
}

static void node_job_init(node_job *j, pg_runtime *rt, int n, int pool) {
    j->rt = rt;
    j->n = n;
    j->pool = pool;
    if (pg_task_builtin(rt, "gemm_f64", &j->gemm))
        node_die("gemm_f64");
    j->a = calloc((size_t)pool, sizeof *j->a);
    j->b = calloc((size_t)pool, sizeof *j->b);
    j->c = calloc((size_t)pool, sizeof *j->c);
    j->host = malloc(sizeof(double) * (size_t)n * (size_t)n);
    for (int i = 0; i < n * n; i++)
        j->host[i] = (double)(i % 7) * 0.25;
    int64_t shape[2] = {n, n};
    for (int p = 0; p < pool; p++)
        if (pg_array_new(rt, PG_FLOAT64, 2, shape, &j->a[p]) ||
            pg_array_new(rt, PG_FLOAT64, 2, shape, &j->b[p]) ||
            pg_array_new(rt, PG_FLOAT64, 2, shape, &j->c[p]) ||
            pg_array_write(j->a[p], 0, (uint64_t)n * n, j->host) ||
            pg_array_write(j->b[p], 0, (uint64_t)n * n, j->host))
            node_die("arrays");
}

/* Task i: C_j = A_j B_j, j = i mod pool; fresh: A_j and B_j written from the host first. */
static void node_task(node_job *j, int i, int fresh) {
    int p = i % j->pool;
    uint64_t nn = (uint64_t)j->n * (uint64_t)j->n;
    if (fresh &&
        (pg_array_write(j->a[p], 0, nn, j->host) || pg_array_write(j->b[p], 0, nn, j->host)))
        node_die("fresh inputs");
    pg_arg args[] = {pg_arg_array(j->a[p]), pg_arg_array(j->b[p]), pg_arg_array(j->c[p]),
                     pg_arg_int(j->n),      pg_arg_int(j->n),      pg_arg_int(j->n),
                     pg_arg_int(0),         pg_arg_int(0),         pg_arg_double(1.0),
                     pg_arg_double(0.0)};
    if (pg_kernel_launch(j->gemm, (pg_dim3){1, 1, 1}, (pg_dim3){1, 1, 1}, 0, args, 10))
        node_die("gemm");
}

/* Runs `tasks` tasks and waits for them: seconds. */
static double node_run(node_job *j, int tasks, int fresh) {
    double t0 = node_now();
    for (int i = 0; i < tasks; i++)
        node_task(j, i, fresh);
    if (pg_runtime_sync(j->rt))
        node_die("sync");
    return node_now() - t0;
}

#endif
