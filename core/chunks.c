/* chunks.c: kernels with chunked outputs (out(chunks=blocks) in a signature) — PROACT's
 * transfers that start before the producer ends. A launch counts its finished thread blocks
 * per chunk and raises one flag per chunk (backend launch_chunks: an epilogue compiled into the
 * kernel on GPUs, the workers on CPU devices); a later copy of such an output, issued while the
 * kernel may still run, goes as one copy per group of chunks, each after a stream wait on its
 * flags (backend wait_flags: cuStreamWaitValue32 on GPUs, so the copy engine moves the data and
 * no SM polls) instead of after the kernel's completion event. This file decides the chunk sizes
 * and keeps what a copy needs to know; core/issue.c hands the copies to streams. */
#include "core/chunks.h"
#include "core/comp.h"
#include "core/util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Fewer flags than this per launch: a copy waits on each flag of its group. */
#define MAX_FLAGS 65536
/* Per-copy cost never below this (a stream wait and a copy's own start), microseconds. */
#define MIN_OVERHEAD_US 2.0

/* The copy size that balances the per-copy cost against the last chunk's copy once the kernel
 * ends, for `bytes` over the link src -> dst: with n copies the time is about
 * max(kernel, n * o + bytes / bw) + o + bytes / (n * bw), least at n = sqrt(bytes / (bw * o)),
 * i.e. chunks of sqrt(bytes * bw * o). */
static double link_chunk_bytes(pg__runtime *rt, int src, int dst, double bytes) {
    double bw = pg__interconnect_bw(&rt->ic, src, dst) * 1e9; /* bytes per second */
    double o = rt->ic.lat_us[src * rt->ic.nloc + dst];
    if (!(o >= MIN_OVERHEAD_US))
        o = MIN_OVERHEAD_US;
    if (!(bw > 0))
        return bytes;
    double c = sqrt(bytes * bw * o * 1e-6);
    return c < bytes ? c : bytes;
}

uint64_t pg__chunks_copy_bytes(pg__runtime *rt, int src, int dst, uint64_t bytes) {
    if (rt->opt.chunk_bytes)
        return rt->opt.chunk_bytes;
    double c = link_chunk_bytes(rt, src, dst, (double)bytes);
    return c >= 1 ? (uint64_t)c : 1;
}

/* The arguments c's blocks write chunk by chunk: each parameter declared chunked, bound to a
 * piece that no other parameter writes (its blocks' order then says when its bytes are final).
 * The piece is the first of the parameter's range, where the parameter's pointer points. */
static void find_args(const pg__comp *c, pg__chunks *ch, uint64_t threads) {
    const pg__kernel *k = c->kernel;
    for (int p = 0; p < k->nparams && p < c->nslots && ch->n < PG__CHUNK_ARGS; p++) {
        int K = k->params[p].chunk_per_thread, j = c->slot_arg[p];
        if (K <= 0 || j < 0 || !(k->params[p].access & PG_ACCESS_OUT))
            continue; /* in(chunks=...) says what a block reads: for splitting only */
        pg__array *a = c->args[j].array;
        int shared = 0;
        for (int q = 0; q < k->nparams && q < c->nslots && !shared; q++) {
            int jq = c->slot_arg[q];
            shared = q != p && jq >= 0 && c->args[jq].array->store == a->store &&
                     (k->params[q].access & PG_ACCESS_OUT);
        }
        if (shared)
            continue;
        ch->arg[ch->n].a = a;
        ch->arg[ch->n].block_bytes = (uint64_t)K * threads * pg_dtype_size(a->dtype);
        ch->n++;
    }
}

static void free_sync(pg__runtime *rt, const pg__chunks *ch) {
    if (ch->zeroed)
        rt->ops->event_free(rt->b, ch->zeroed);
    if (rt->ops->flags_free)
        rt->ops->flags_free(rt->b, ch->dev, ch->sync, (size_t)ch->nflags * 2 * sizeof(uint32_t));
    else
        rt->ops->dev_free(rt->b, ch->dev, ch->sync);
}

pg_status pg__chunks_launch(pg__runtime *rt, pg__comp *c, pg__stream *s, void *fn) {
    uint64_t nblocks = (uint64_t)c->grid.x * c->grid.y * c->grid.z;
    uint64_t threads = (uint64_t)c->block.x * c->block.y * c->block.z;
    pg__chunks probe = {0};
    /* Counting pays off only where a copy can use it: not inside a recording (a plan's graph
     * has no stream waits on flags), not when every call waits anyway. */
    if (!rt->cap && !rt->opt.sync && rt->ops->wait_flags && nblocks > 1 && nblocks <= UINT32_MAX)
        find_args(c, &probe, threads);
    if (probe.n == 0)
        return rt->ops->launch_chunks(rt->b, s->b, fn, c->grid, c->block, c->shared_mem, c->slots,
                                      c->nslots, NULL, 0, c->timed ? &c->timing : NULL);
    /* Flags as fine as the finest copy size any link from here would want; a copy over a
     * faster link waits on several flags and moves their chunks at once. */
    uint64_t bb = probe.arg[0].block_bytes;
    uint64_t bytes = nblocks * bb < probe.arg[0].a->nbytes ? nblocks * bb : probe.arg[0].a->nbytes;
    int src = PG__LOC(s->device);
    uint64_t want = UINT64_MAX;
    for (int l = 0; l <= rt->ndev; l++)
        if (l != src) {
            uint64_t w = pg__chunks_copy_bytes(rt, src, l, bytes);
            want = w < want ? w : want;
        }
    uint64_t bpc = bb ? (want + bb / 2) / bb : nblocks;
    if (bpc < 1)
        bpc = 1;
    if ((nblocks + bpc - 1) / bpc > MAX_FLAGS)
        bpc = (nblocks + MAX_FLAGS - 1) / MAX_FLAGS;
    uint32_t nflags = (uint32_t)((nblocks + bpc - 1) / bpc);
    pg__chunks *ch = pg__malloc(sizeof *ch);
    if (!ch)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    *ch = probe;
    ch->dev = s->device;
    ch->nflags = nflags;
    ch->bpc = (uint32_t)bpc;
    ch->nblocks = nblocks;
    void *sync = NULL;
    size_t sync_bytes = (size_t)nflags * 2 * sizeof(uint32_t);
    pg_status st = rt->ops->flags_alloc
                       ? rt->ops->flags_alloc(rt->b, s->device, sync_bytes, &sync)
                       : rt->ops->dev_alloc(rt->b, s->device, sync_bytes, s->b, &sync);
    if (st) { /* no room for flags: the copies will wait for the whole kernel, as without */
        pg__free(ch);
        pg__log(rt, 1, "kernel '%s': chunked outputs copied after the kernel (%s)", c->kernel->name,
                pg_last_error());
        pg__error_clear();
        return rt->ops->launch_chunks(rt->b, s->b, fn, c->grid, c->block, c->shared_mem, c->slots,
                                      c->nslots, NULL, 0, c->timed ? &c->timing : NULL);
    }
    st = rt->ops->memset_zero(rt->b, s->b, sync, sync_bytes);
    int queued = st == PG_OK;
    ch->sync = sync;
    ch->zeroed = NULL;
    if (!st)
        st = rt->ops->event_record(rt->b, s->b, &ch->zeroed);
    if (!st)
        st = rt->ops->launch_chunks(rt->b, s->b, fn, c->grid, c->block, c->shared_mem, c->slots,
                                    c->nslots, ch->sync, ch->bpc, c->timed ? &c->timing : NULL);
    if (st) {
        /* The zeroing queued on the stream may still write the memory: it is left to the
         * backend's close (a stream that fails this way fails its device, decision 9). */
        if (!queued)
            free_sync(rt, ch);
        else if (ch->zeroed)
            rt->ops->event_free(rt->b, ch->zeroed);
        pg__free(ch);
        return st;
    }
    c->chunks = ch;
    return PG_OK;
}

void pg__chunks_free(pg__runtime *rt, pg__comp *c) {
    if (!c->chunks)
        return;
    free_sync(rt, c->chunks);
    pg__free(c->chunks);
    c->chunks = NULL;
}

int pg__chunks_copyable(pg__runtime *rt, const pg__comp *p, const pg__array *a, int src,
                        uint64_t *block_bytes) {
    if (!p || !p->chunks || rt->cap || p->state != PG__ISSUED || src != PG__LOC(p->device) ||
        pg__comp_known_done(p))
        return 0;
    for (int i = 0; i < p->chunks->n; i++)
        if (p->chunks->arg[i].a == a) {
            *block_bytes = p->chunks->arg[i].block_bytes;
            return 1;
        }
    return 0;
}
