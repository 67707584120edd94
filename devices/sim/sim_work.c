/* sim_work.c: the work of simulated GPUs — copies over routes, memsets, kernels — as engine
 * operations with their durations, and (compute=cpu) the same work done for real.
 *
 * Durations:
 *   copy between two locations: the route's latencies added, then `bytes` over its links, each
 *       shared max-min fairly with the copies using it at the same time, and over the links'
 *       duplex limits and the host's DMA limit where the topology sets them. A copy runs on a
 *       copy engine of its GPU — one for copies into it, one for copies out of it (a copy
 *       between GPUs: the engine of the GPU whose stream issued it, else the source's) — which
 *       runs one copy at a time, in the order they became ready: two copies into one GPU run one
 *       after the other, not side by side (as measured on H200s, benchmarks/results/
 *       *-sim-validation-2);
 *   copy within one location: 2 x bytes (read and write) over that memory's bandwidth;
 *   memset: bytes over the GPU's memory bandwidth;
 *   kernel: D = the profile's model for (kernel, device name) — a + b x, x the launch's argument
 *       bytes or threads — else kernel_us + argument bytes / memory bandwidth. Alone a kernel
 *       takes D; kernels running at once share the GPU by what they use of it: its
 *       multiprocessors (the launch's threads over sms x sm_threads, at most all) and its memory
 *       bandwidth (argument bytes / D, at most all of it). Two kernels that each fill the GPU
 *       take as long as one after the other; small ones run side by side; memory-bound ones
 *       together reach the memory's bandwidth. Argument bytes: for each parameter whose value
 *       lies in a buffer of the device, the bytes from there to the buffer's end.
 * Each launch and memset costs the host the topology's launch_us, each copy its copy_us; a
 * launched kernel starts launch_latency_us after the call at the earliest. */
#include "base/alloc.h"
#include "base/error.h"
#include "devices/sim/sim_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int loc_of(int dev) {
    return dev == PG_HOST ? 0 : dev + 1;
}

int pg__sim_copy_work(const pg__backend *b, int stream_dev, int dst_loc, int src_loc, double bytes,
                      pg__sim_work *w) {
    const pg__sim_topo *t = b->topo;
    memset(w, 0, sizeof *w);
    if (src_loc < 0 || dst_loc < 0 || src_loc > t->ngpu || dst_loc > t->ngpu)
        return -1;
    w->work = bytes;
    if (src_loc == dst_loc) {
        w->res[w->nres++] = src_loc ? pg__sim_res_memory(b, src_loc - 1) : pg__sim_res_host(b);
        w->work *= 2;
        return 0;
    }
    const pg__sim_route *r = &t->route[src_loc][dst_loc];
    for (int i = 0; i < r->nhops; i++) {
        w->res[w->nres++] = pg__sim_res_link(r->link[i]);
        if (t->link[r->link[i]].duplex >= 0)
            w->res[w->nres++] = pg__sim_res_duplex(b, t->link[r->link[i]].duplex);
    }
    if ((src_loc == 0 || dst_loc == 0) && t->host_dma_gbps > 0)
        w->res[w->nres++] = pg__sim_res_dma(b);
    w->delay = r->lat_us * 1e3;
    int in = dst_loc > 0, out = src_loc > 0;
    if (in && out) /* between GPUs: the engine of the stream's GPU, else the source's */
        in = stream_dev == dst_loc - 1, out = !in;
    w->engine[w->nengines++] =
        in ? pg__sim_engine_in(dst_loc - 1) : pg__sim_engine_out(src_loc - 1);
    return 0;
}

pg_status pg__sim_copy(pg__backend *b, pg__bstream *s, int dst_dev, void *dst, int src_dev,
                       const void *src, size_t bytes, pg__timing *t) {
    int sl = loc_of(src_dev), dl = loc_of(dst_dev);
    pg__sim_work w;
    if (pg__sim_copy_work(b, s->dev, dl, sl, (double)bytes, &w))
        return pg__error(PG_ERROR_INTERNAL, "sim copy between devices %d and %d: no such device",
                         src_dev, dst_dev);
    pg__sim_enter(b);
    /* Without compute only host memory is real: a copy into a device is its timing alone. Done
     * inside the call, so the simulator's memmove is not the host's time. */
    if (bytes && (b->mem.real || (sl == 0 && dl == 0)))
        memmove(dst, src, bytes);
    pg__sim_host_spends(b, b->topo->copy_api_us);
    pg__sim_op *op = pg__sim_submit(b, s, &w, NULL, 0);
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
    pg__sim_work w = {.work = (double)bytes, .nres = 1, .res = {pg__sim_res_memory(b, s->dev)}};
    pg__sim_op *op = pg__sim_submit(b, s, &w, NULL, 0);
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

void pg__sim_kernel_work(const pg__backend *b, const pg__sim_fn *f, pg_dim3 grid, pg_dim3 block,
                         const uint64_t *params, int nparams, pg__sim_work *w) {
    const pg__sim_gpu *g = &b->topo->gpu[f->dev];
    uint64_t bytes = 0;
    for (int i = 0; i < nparams; i++)
        bytes += pg__sim_mem_extent(&b->mem, f->dev, (uintptr_t)params[i]);
    /* 2^31 x 2^16 x 2^16 blocks of 1024 threads overflow 64 bits: counted in a double. */
    double threads = (double)grid.x * grid.y * grid.z * block.x * block.y * block.z;
    double ns = f->model ? pg__sim_model_ns(f->model, bytes,
                                            threads < 1.8e19 ? (uint64_t)threads : UINT64_MAX)
                         : g->kernel_us * 1e3 + (double)bytes / g->mem_gbps;
    memset(w, 0, sizeof *w);
    w->work = ns; /* in ns of the kernel alone: its rate is at most 1 */
    w->max_rate = 1.0;
    double share = threads / ((double)g->info.multiprocessors * g->sm_threads);
    w->res[w->nres] = pg__sim_res_compute(b, f->dev);
    w->use[w->nres++] = share < 1 ? (share > 1e-9 ? share : 1e-9) : 1.0;
    if (bytes && ns > 0) {
        double bw = (double)bytes / ns;
        w->res[w->nres] = pg__sim_res_memory(b, f->dev);
        w->use[w->nres++] = bw < g->mem_gbps ? bw : g->mem_gbps;
    }
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
    pg__sim_work w;
    pg__sim_kernel_work(b, f, grid, block, params, nparams, &w);
    w.not_before = pg__sim_now(b->eng) + b->topo->launch_latency_us * 1e3;
    pg__sim_op *op = pg__sim_submit(b, s, &w, NULL, 0);
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
