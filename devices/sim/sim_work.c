/* sim_work.c: the work of simulated GPUs — copies over routes, memsets, kernels — as engine
 * operations with their durations, and (compute=cpu) the same work done for real.
 *
 * Durations:
 *   copy between two locations: the route's latencies added, then `bytes` over its links, each
 *       shared max-min fairly with the copies using it at the same time;
 *   copy within one location: 2 x bytes (read and write) over that memory's bandwidth;
 *   memset: bytes over the GPU's memory bandwidth;
 *   kernel: the profile's model for (kernel, device name) — a + b x, x the launch's argument
 *       bytes or threads — else kernel_us + argument bytes / memory bandwidth; kernels running at
 *       once on one GPU share it (processor sharing: two together take as long as one after the
 *       other). Argument bytes: for each parameter whose value lies in a buffer of the device,
 *       the bytes from there to the buffer's end.
 * Each launch and memset costs the host the topology's launch_us, each copy its copy_us. */
#include "base/alloc.h"
#include "base/error.h"
#include "devices/sim/sim_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int loc_of(int dev) {
    return dev == PG_HOST ? 0 : dev + 1;
}

pg_status pg__sim_copy(pg__backend *b, pg__bstream *s, int dst_dev, void *dst, int src_dev,
                       const void *src, size_t bytes, pg__timing *t) {
    int sl = loc_of(src_dev), dl = loc_of(dst_dev);
    if (sl < 0 || dl < 0 || sl > b->topo->ngpu || dl > b->topo->ngpu)
        return pg__error(PG_ERROR_INTERNAL, "sim copy between devices %d and %d: no such device",
                         src_dev, dst_dev);
    pg__sim_enter(b);
    /* Without compute only host memory is real: a copy into a device is its timing alone. Done
     * inside the call, so the simulator's memmove is not the host's time. */
    if (bytes && (b->mem.real || (sl == 0 && dl == 0)))
        memmove(dst, src, bytes);
    pg__sim_host_spends(b, b->topo->copy_api_us);
    int res[PG__SIM_OP_RES], nres = 0;
    double delay = 0, work = (double)bytes;
    if (sl == dl) {
        res[nres++] = sl ? pg__sim_res_memory(b, sl - 1) : pg__sim_res_host(b);
        work *= 2;
    } else {
        const pg__sim_route *r = &b->topo->route[sl][dl];
        for (int i = 0; i < r->nhops; i++)
            res[nres++] = pg__sim_res_link(r->link[i]);
        delay = r->lat_us * 1e3;
    }
    pg__sim_op *op = pg__sim_submit(b, s, delay, work, res, nres, NULL, 0);
    if (op)
        pg__sim_timing_attach(t, op);
    pg__sim_leave(b);
    return op ? PG_OK : pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory for a sim copy");
}

pg_status pg__sim_memset_zero(pg__backend *b, pg__bstream *s, void *p, size_t bytes) {
    pg__sim_enter(b);
    if (b->mem.real && bytes)
        memset(p, 0, bytes);
    pg__sim_host_spends(b, b->topo->launch_api_us);
    int res = pg__sim_res_memory(b, s->dev);
    pg__sim_op *op = pg__sim_submit(b, s, 0, (double)bytes, &res, 1, NULL, 0);
    pg__sim_op_unref(op);
    pg__sim_leave(b);
    return op ? PG_OK : pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory for a sim memset");
}

pg_status pg__sim_kernel_build(pg__backend *b, const pg__kernel_src *src, void **image) {
    pg__sim_kernel *k = pg__calloc(1, sizeof *k);
    if (!k || !(k->name = pg__strdup(src->name))) {
        pg__free(k);
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory for kernel '%s'", src->name);
    }
    if (b->cpu_b) {
        /* The CPU build's time is the simulator's, not the simulated host's. */
        pg__sim_enter(b);
        pthread_mutex_unlock(&b->mu);
        pg_status st = pg__sim_cpu_build(b, src, &k->cpu_image);
        pthread_mutex_lock(&b->mu);
        pg__sim_leave(b);
        if (st) {
            pg__free(k->name);
            pg__free(k);
            return st;
        }
    }
    *image = k;
    return PG_OK;
}

pg_status pg__sim_kernel_function(pg__backend *b, void *image, int dev, void **fn) {
    pg__sim_kernel *k = image;
    if (dev < 0 || dev >= b->topo->ngpu)
        return pg__error(PG_ERROR_INTERNAL, "simulated GPU %d does not exist (there are %d)", dev,
                         b->topo->ngpu);
    pthread_mutex_lock(&b->mu);
    pg_status st = PG_OK;
    if (!k->fn[dev]) {
        pg__sim_fn *f = pg__calloc(1, sizeof *f);
        if (!f)
            st = pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory for kernel '%s'", k->name);
        if (!st && k->cpu_image)
            st = pg__sim_cpu_function(b, k->cpu_image, &f->cpu_fn);
        if (!st) {
            f->k = k;
            f->dev = dev;
            f->model = pg__sim_profile_find(b->profile, k->name, b->topo->gpu[dev].info.name);
            k->fn[dev] = f;
        } else {
            pg__free(f);
        }
    }
    pthread_mutex_unlock(&b->mu);
    if (!st)
        *fn = k->fn[dev];
    return st;
}

void pg__sim_kernel_free(pg__backend *b, void *image) {
    pg__sim_kernel *k = image;
    if (!k)
        return;
    for (int d = 0; d < PG_MAX_DEVICES; d++)
        pg__free(k->fn[d]);
    if (k->cpu_image)
        pg__sim_cpu_free(b, k->cpu_image);
    pg__free(k->name);
    pg__free(k);
}

static double duration_ns(pg__backend *b, const pg__sim_fn *f, pg_dim3 grid, pg_dim3 block,
                          const uint64_t *params, int nparams) {
    uint64_t bytes = 0;
    for (int i = 0; i < nparams; i++)
        bytes += pg__sim_mem_extent(&b->mem, f->dev, (uintptr_t)params[i]);
    /* 2^31 x 2^16 x 2^16 blocks of 1024 threads overflow 64 bits: counted in a double. */
    double threads = (double)grid.x * grid.y * grid.z * block.x * block.y * block.z;
    if (f->model)
        return pg__sim_model_ns(f->model, bytes, threads < 1.8e19 ? (uint64_t)threads : UINT64_MAX);
    const pg__sim_gpu *g = &b->topo->gpu[f->dev];
    return g->kernel_us * 1e3 + (double)bytes / g->mem_gbps;
}

pg_status pg__sim_launch(pg__backend *b, pg__bstream *s, void *fn, pg_dim3 grid, pg_dim3 block,
                         size_t shared_mem, const uint64_t *params, int nparams, pg__timing *t) {
    const pg__sim_fn *f = fn;
    char why[400] = "";
    int failed = 0;
    pg__sim_enter(b);
    if (f->cpu_fn) {
        /* The run's time is the simulator's: the host's clock restarts when it ends. */
        pthread_mutex_unlock(&b->mu);
        pg_status st = pg__sim_cpu_run(b, f->cpu_fn, grid, block, shared_mem, params, nparams,
                                       &failed, why, sizeof why);
        pthread_mutex_lock(&b->mu);
        if (st) {
            pg__sim_leave(b);
            return pg__error_wrap(st, "sim compute=cpu: running kernel '%s'", f->k->name);
        }
        pg__sim_leave(b);
        pg__sim_enter(b);
    }
    pg__sim_host_spends(b, b->topo->launch_api_us);
    int res = pg__sim_res_compute(b, s->dev);
    double ns = duration_ns(b, f, grid, block, params, nparams);
    pg__sim_op *op = pg__sim_submit(b, s, 0, ns, &res, 1, NULL, 0);
    if (op && failed) {
        char msg[480];
        snprintf(msg, sizeof msg, "kernel '%s' failed on simulated GPU %d (run on the CPU): %s",
                 f->k->name, s->dev, why);
        pg__sim_op_fail(op, s->dev, msg);
    }
    if (op)
        pg__sim_timing_attach(t, op);
    pg__sim_leave(b);
    return op ? PG_OK : pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory for a sim launch");
}
