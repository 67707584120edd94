/* sim_cpu.c: compute=cpu — kernels of simulated GPUs also run for real, on one CPU device of the
 * host backend (through its ops table, as the core would use it), while their times stay
 * virtual. Each launch runs to completion before the call returns: the core enqueues a
 * computation only after everything it depends on was enqueued, so running everything in
 * enqueue order respects every stream order and event wait, whatever the virtual timeline. */
#include "base/error.h"
#include "devices/sim/sim_internal.h"

#include <stdio.h>

pg_status pg__sim_cpu_open(pg__backend *b) {
    int n = 0;
    pg_status st = pg__host_backend_open("1", 0, 0, &b->cpu, &b->cpu_b, &n);
    if (!st && (st = b->cpu->stream_new(b->cpu_b, 0, &b->cpu_s))) {
        b->cpu->close(b->cpu_b);
        b->cpu_b = NULL;
    }
    return st ? pg__error_wrap(st, "sim compute=cpu: opening the CPU device that runs the kernels")
              : PG_OK;
}

void pg__sim_cpu_close(pg__backend *b) {
    if (!b->cpu_b)
        return;
    if (b->cpu_s)
        b->cpu->stream_free(b->cpu_b, b->cpu_s);
    b->cpu->close(b->cpu_b);
    b->cpu_b = NULL;
    b->cpu_s = NULL;
}

pg_status pg__sim_cpu_build(pg__backend *b, const pg__kernel_src *src, void **image) {
    pg_status st = b->cpu->kernel_build(b->cpu_b, src, image);
    return st ? pg__error_wrap(st,
                               "sim compute=cpu (the default; compute=none times the work "
                               "without running it): building kernel '%s' to run on the CPU",
                               src->name)
              : PG_OK;
}

pg_status pg__sim_cpu_function(pg__backend *b, void *image, void **fn) {
    return b->cpu->kernel_function(b->cpu_b, image, 0, fn);
}

void pg__sim_cpu_free(pg__backend *b, void *image) {
    b->cpu->kernel_free(b->cpu_b, image);
}

pg_status pg__sim_cpu_run(pg__backend *b, void *fn, pg_dim3 grid, pg_dim3 block, size_t shared,
                          const uint64_t *params, int nparams, int *failed, char *why, size_t cap) {
    *failed = 0;
    pthread_mutex_lock(&b->cpu_mu);
    pg__bevent *e = NULL;
    pg_status st =
        b->cpu->launch(b->cpu_b, b->cpu_s, fn, grid, block, shared, params, nparams, NULL);
    if (!st)
        st = b->cpu->event_record(b->cpu_b, b->cpu_s, &e);
    if (!st)
        st = b->cpu->event_wait(b->cpu_b, e);
    int dev = -1;
    if (!st && b->cpu->event_error &&
        b->cpu->event_error(b->cpu_b, e, &dev, why, cap) == PG_ERROR_DEVICE)
        *failed = 1;
    if (e)
        b->cpu->event_free(b->cpu_b, e);
    pthread_mutex_unlock(&b->cpu_mu);
    return st;
}
