/* place.c: where a computation runs — the flow of the GrCUDA paper's Figure 5 (GrCUDA's
 * GrCUDAStreamPolicy). Without unfinished parents, or when every parent's stream was taken by a
 * sibling, the device policy picks among all devices and the new-stream policy a stream there;
 * otherwise the parent-stream policy reuses a free parent's stream (docs/PLACEMENT.md). Core
 * builds the policy's view here (probing which streams are busy, which may finish computations)
 * and calls the policy, a pure function of that view; the caller creates streams and marks
 * stream reuse. */
#include "core/place.h"
#include "core/comp.h"
#include "core/deps.h"
#include "core/models.h"
#include "core/pieces.h"
#include "core/streams.h"
#include "core/share.h"

#include <stdio.h>
#include <string.h>

/* The other kernels reading a's current value that have not been seen finished, counted from the
 * newest up to PG_POLICY_READERS_MAX: a policy asks whether a value is shared, and counting
 * every reader made each placement cost as much as the reads of an input since its last write
 * (launch_overhead on host:4: 22k instructions per launch against 250 on host:1). Readers known
 * to be done are dropped from the history when they are the many, so the next count is short. */
static uint32_t unfinished_readers(pg__runtime *rt, const pg__comp *c, pg__array *a) {
    uint32_t unfinished = 0, done = 0;
    for (int r = a->hist.nreaders - 1; r >= 0 && unfinished < PG_POLICY_READERS_MAX; r--) {
        const pg__comp *rc = a->hist.readers[r];
        if (rc == c || rc->kind != PG__KERNEL)
            continue;
        if (pg__comp_known_done(rc))
            done++;
        else
            unfinished++;
    }
    if (done >= 32 && done > unfinished)
        pg__dag_drop_done(rt, a);
    return unfinished;
}

static void build_view(pg__runtime *rt, const pg__comp *c, pg_policy_device *devs,
                       pg_policy_array *arrays, pg_policy_view *v, uint32_t candidates) {
    uint32_t all = (1u << (rt->ndev + 1)) - 1;
    uint64_t now = 0;
    for (int d = 0; d < rt->ndev; d++) {
        pg__device *dv = &rt->dev[d];
        int busy = 0;
        for (int s = 0; s < dv->nstreams; s++)
            busy += pg__stream_busy_at(rt, dv->streams[s], &now);
        devs[d].id = d;
        devs[d].busy_streams = busy;
        devs[d].streams = dv->nstreams;
        devs[d].inflight = dv->inflight;
        devs[d].queued_s = (double)dv->queued_ns * 1e-9;
        devs[d].predicted_s = -1;
    }
    /* After every device was probed: probing finishes computations, which leave the backlog. */
    for (int d = 0; d < rt->ndev; d++) {
        devs[d].backlog_s = (double)rt->dev[d].backlog_ns * 1e-9;
        devs[d].estimated_s = (double)pg__models_estimate_ns(rt, c, d) * 1e-9;
    }
    pg__share_view(rt, devs); /* the other processes' load on these devices */
    if (rt->opt.models && c->kind == PG__KERNEL && c->kernel) {
        uint64_t bytes = pg__models_args_bytes(c);
        for (int d = 0; d < rt->ndev; d++) {
            int64_t p = pg__models_predict(rt, c->kernel->name, d, bytes);
            devs[d].predicted_s = p < 0 ? -1 : (double)p * 1e-9;
        }
    }
    for (int i = 0; i < c->nargs; i++) {
        const pg__array *a = c->args[i].array;
        arrays[i].nbytes = a->nbytes;
        arrays[i].valid = a->fresh ? all : a->valid;
        arrays[i].access = c->args[i].access;
        arrays[i].readers = unfinished_readers(rt, c, c->args[i].array);
    }
    v->ndevices = rt->ndev;
    v->devices = devs;
    v->narrays = c->nargs;
    v->arrays = arrays;
    v->bandwidth = rt->policy_bw;
    v->exploration_threshold = rt->opt.exploration_threshold;
    v->candidates = candidates;
}

/* Devices that have not failed (a kernel faulted there) and whose limits c fits (the launch
 * checked that one does): the only ones c may go to. */
static uint32_t alive(const pg__runtime *rt, const pg__comp *c) {
    uint32_t m = 0;
    for (int d = 0; d < rt->ndev; d++)
        if (!rt->dev[d].failed)
            m |= 1u << d;
    return m & c->fits;
}

static pg_status none_alive(pg__runtime *rt, const pg__comp *c) {
    /* Each device's own reason: they may differ (a fault on one GPU, or the driver refusing the
     * others after it). */
    char why[4096];
    size_t len = 0;
    why[0] = '\0';
    for (int d = 0; d < rt->ndev && len < sizeof why; d++)
        if (c->fits >> d & 1)
            len += (size_t)snprintf(why + len, sizeof why - len, "%sdevice %d: %s", len ? "; " : "",
                                    d, rt->dev[d].failure ? rt->dev[d].failure : "failed");
    return pg__error(PG_ERROR_DEVICE,
                     "kernel '%s' cannot run: every device %shas failed (%s); arrays with a host "
                     "copy can still be read",
                     c->kernel ? c->kernel->name : "?",
                     c->fits == (1u << rt->ndev) - 1 ? "" : "whose limits allow its launch ", why);
}

/* Rows next to each other stay on one device. A computation that writes rows of an array (a
 * view's pieces) and whose inputs are on no device yet — the first kernel over each partition
 * of a split array, or one that overwrites it — goes where those rows already are, else where
 * the rows just before them are while that device holds less than its share (the array's
 * bytes over the candidate devices): partitions made in order then fill one device after
 * another, a block distribution, so neighbours exchange only the rows at the block edges (a
 * 2-D stencil on 2 GPUs moved 15x the halo bytes when its 16 partitions went to alternate
 * devices), and stay there. -1: no such preference; the device policy decides. Round-robin is
 * left to rotate. */
static int neighbour_device(const pg__runtime *rt, const pg__comp *c, uint32_t candidates) {
    const pg__array *w = NULL;
    for (int i = 0; i < c->nargs; i++) {
        const pg__array *a = c->args[i].array;
        if ((c->args[i].access & PG_ACCESS_IN) && !a->fresh && (a->valid & ~PG__LOC_BIT(0)))
            return -1; /* data on a device: the policy weighs it */
        if ((c->args[i].access & PG_ACCESS_OUT) && a->kind == PG__A_PIECE &&
            (!w || a->off < w->off))
            w = a;
    }
    if (!w || !strcmp(rt->policy.name, "round-robin")) /* whole arrays: nothing to keep */
        return -1;
    for (int k = 0; k < rt->ndev; k++) /* the rows are on a device already: stay */
        if (!w->fresh && (w->valid >> (k + 1) & 1) && (candidates >> k & 1))
            return k;
    if (w->off == 0)
        return -1;
    pg__array *r = w->store;
    const pg__array *nb = pg__array_piece_at(r, w->off - 1);
    int d = -1;
    for (int k = 0; k < rt->ndev && d < 0; k++)
        if (!nb->fresh && (nb->valid >> (k + 1) & 1) && (candidates >> k & 1))
            d = k;
    if (d < 0)
        return -1;
    uint64_t held = 0;
    for (int i = 0; i < r->npieces; i++)
        if (!r->pieces[i]->fresh && (r->pieces[i]->valid >> (d + 1) & 1))
            held += r->pieces[i]->nbytes;
    int ncand = __builtin_popcount(candidates);
    return held * (uint64_t)ncand >= r->nbytes ? -1 : d;
}

/* A computation that reads nothing (it only writes: zeroing a partition's result, say) moves no
 * data wherever it runs, and the parents it waits for only read what it overwrites: neither
 * says where it should go. Where its output was last written does: the kernels that read those
 * rows next usually run there too. Going to a parent's device instead made CG's zero of each
 * partition's rows run on GPU 0 (where the dot product had read them) and its product on GPU 1
 * (where the matrix is): one copy of the zeros per partition per iteration. -1: no such device
 * among the candidates (or it reads something, or round-robin, which is left to rotate). */
static int writer_device(const pg__runtime *rt, const pg__comp *c, uint32_t candidates) {
    const pg__comp *w = NULL;
    for (int i = 0; i < c->nargs; i++) {
        if (c->args[i].access & PG_ACCESS_IN)
            return -1;
        const pg__comp *wi = c->args[i].array->hist.writer;
        if (!w && wi && wi->kind == PG__KERNEL)
            w = wi;
    }
    if (!w || w->device < 0 || w->device >= rt->ndev || !(candidates >> w->device & 1) ||
        !strcmp(rt->policy.name, "round-robin"))
        return -1;
    return w->device;
}

static pg_status choose(pg__runtime *rt, const pg__comp *c, uint32_t candidates, int *dev) {
    pg_policy_device devs[PG_MAX_DEVICES];
    pg_policy_array arrays[PG__MAX_PARAMS];
    pg_policy_view v;
    if (rt->ndev == 1 && !rt->dev[0].failed) {
        *dev = 0;
        return PG_OK;
    }
    build_view(rt, c, devs, arrays, &v, candidates);
    /* Looking at the devices may have shown one failed just now. */
    v.candidates = candidates &= alive(rt, c);
    if (!candidates)
        return none_alive(rt, c);
    v.candidates = candidates = pg__share_room(rt, c, candidates); /* room beside others */
    v.candidates = candidates = pg__share_home(rt, candidates);    /* its home while others run */
    int near = writer_device(rt, c, candidates);
    if (near < 0)
        near = neighbour_device(rt, c, candidates);
    if (near >= 0) {
        *dev = near;
        return PG_OK;
    }
    int d = rt->policy.ops.choose(rt->policy.state, &v);
    if (d < 0 || d >= rt->ndev || !(candidates >> d & 1))
        return pg__error(PG_ERROR_ARGUMENT,
                         "device policy '%s' chose device %d, which is not one of the candidates",
                         rt->policy.name, d);
    *dev = d;
    return PG_OK;
}

/* Whether a device outside `parents` (among `all`) holds more of c's input bytes than every device
 * in `parents`. multigpu-disjoint then asks the device policy over all devices: limiting it to
 * the free parents' devices would move the bulk of the data to follow a parent that made a small
 * part of it (CG at the GrCUDA paper's sizes: a kernel zeroing 15 KB of y on GPU 1 dragged each
 * 900 MB block of the matrix there, and after that every product ran on GPU 1). */
static int inputs_held_elsewhere(const pg__runtime *rt, const pg__comp *c, uint32_t parents,
                                 uint32_t all) {
    uint64_t in_parents = 0, elsewhere = 0;
    for (int d = 0; d < rt->ndev; d++) {
        if (!(all >> d & 1))
            continue;
        uint64_t held = 0;
        for (int i = 0; i < c->nargs; i++) {
            const pg__array *a = c->args[i].array;
            if ((c->args[i].access & PG_ACCESS_IN) && !a->fresh && (a->valid >> (d + 1) & 1))
                held += a->nbytes;
        }
        uint64_t *best = (parents >> d & 1) ? &in_parents : &elsewhere;
        if (held > *best)
            *best = held;
    }
    return elsewhere > in_parents;
}

/* New-stream policy: fifo reuses a stream whose work has finished; NULL asks for a new one. */
static pg__stream *new_stream(pg__runtime *rt, int dev) {
    return rt->opt.stream_policy == PG__NEW_ALWAYS ? NULL : pg__stream_idle(rt, dev);
}

/* A parent on dev whose stream no sibling has taken yet. */
static pg__comp *free_parent_on(pg__comp **ps, int n, int dev) {
    for (int i = 0; i < n; i++)
        if (ps[i]->device == dev && !ps[i]->stream_taken)
            return ps[i];
    return NULL;
}

pg_status pg__policy_place(pg__runtime *rt, pg__comp *c, int *device, pg__stream **stream,
                           pg__comp **stream_parent) {
    pg__comp *ps[PG__MAX_PARAMS * 4];
    int n = 0;
    uint32_t free_devs = 0; /* devices of parents whose stream no sibling has taken */
    for (int i = 0; i < c->nparents && n < (int)(sizeof ps / sizeof *ps); i++) {
        pg__comp *p = c->parents[i];
        if (p->stream && !p->stream->copy && !pg__comp_known_done(p) &&
            !rt->dev[p->device].failed && (c->fits >> p->device & 1)) {
            ps[n++] = p;
            if (!p->stream_taken)
                free_devs |= 1u << p->device;
        }
    }
    uint32_t all = alive(rt, c);
    *stream_parent = NULL;
    if (!all)
        return none_alive(rt, c);
    pg__comp *p = NULL;
    pg_status st = PG_OK;
    if (n && rt->opt.parent_stream_policy == PG__PARENT_SAME) {
        *device = ps[0]->device;
        *stream = ps[0]->stream;
        return PG_OK;
    }
    /* Figure 5: a parent's stream is reused only while no sibling has taken it. With no parent
     * stream left to reuse (or no unfinished parent), the device policy picks among all devices,
     * not only the parents', and the new-stream policy a stream there. Early-disjoint always asks
     * the device policy first, then reuses a free parent stream on the device it chose. */
    if (!n || !free_devs || rt->opt.parent_stream_policy == PG__PARENT_MULTIGPU_EARLY_DISJOINT) {
        st = choose(rt, c, all, device);
        p = st || !n ? NULL : free_parent_on(ps, n, *device); /* early-disjoint: may reuse */
    } else if (rt->opt.parent_stream_policy == PG__PARENT_DISJOINT) {
        /* The first parent whose stream is free; the device policy is not asked. */
        for (int i = 0; i < n && !p; i++)
            if (!ps[i]->stream_taken)
                p = ps[i];
        *device = p->device;
    } else { /* multigpu-disjoint: the best device among the free parents', or among all
              * devices when another holds more of the inputs (then a free parent's stream on
              * the chosen device is still reused) */
        uint32_t over = inputs_held_elsewhere(rt, c, free_devs, all) ||
                                writer_device(rt, c, all & ~free_devs) >= 0
                            ? all
                            : free_devs;
        st = choose(rt, c, over, device);
        p = st ? NULL : free_parent_on(ps, n, *device);
    }
    if (st)
        return st;
    if (p) {
        *stream = p->stream;
        *stream_parent = p;
    } else {
        *stream = new_stream(rt, *device);
    }
    return PG_OK;
}
