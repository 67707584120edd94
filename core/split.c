/* split.c: one launch over several devices. A kernel whose signature says what each thread
 * block writes of every array it writes (out/inout(chunks=blocks[*K]) or (rows=blocks*R)) and,
 * optionally, what it reads (in(...) likewise, with a halo; an input with no option is read
 * whole) is *splittable*: a launch of it becomes one computation per device, each over a
 * contiguous range of the grid's blocks (backend op launch_range: the blocks see their true
 * blockIdx and the whole gridDim, so the kernel's body is unchanged). Each part binds, for each
 * array argument, the pieces of the range its blocks touch (core/pieces.c cuts the array at the
 * range's ends), so dependencies, coherence and copies work per range with nothing new: a part
 * waits only for the work on the rows it reads, and reading a halo moves only the halo. The
 * kernel's pointer still points at the argument's first element (slot_shift), since the
 * kernel indexes the whole array. The ranges are the same from launch to launch for the same
 * grid and devices, so data written by one launch is where the next one reads it. */
#include "core/split.h"
#include "core/array.h"
#include "core/comp.h"
#include "core/exec.h"
#include "core/handle.h"
#include "core/pieces.h"
#include "core/waits.h"
#include "core/models.h"
#include "policies/split_shares.h"

#include "base/alloc.h"

#include <stdio.h>
#include <string.h>

void pg__split_kernel_init(pg__kernel *k) {
    int any = 0, ok = 1;
    for (int i = 0; i < k->nparams; i++) {
        const pg_param_info *p = &k->params[i];
        if (!p->is_array)
            continue;
        if (p->chunk_per_thread || p->rows_per_block)
            any = 1;
        else if (p->access & PG_ACCESS_OUT)
            ok = 0; /* a block may write anywhere in it: not split */
    }
    k->splittable = any && ok && !k->is_task;
    k->split = -1;
}

/* Why k is not splittable (the first array it writes with no declared range), for errors. */
static void why_not(const pg__kernel *k, char *why, size_t cap) {
    snprintf(why, cap,
             "its signature declares no block ranges (write out(chunks=blocks) or "
             "out(rows=blocks*R) for the arrays it writes)");
    for (int i = 0; i < k->nparams; i++) {
        const pg_param_info *p = &k->params[i];
        if (p->is_array && (p->access & PG_ACCESS_OUT) && !p->chunk_per_thread &&
            !p->rows_per_block) {
            snprintf(why, cap,
                     "parameter %d (%s) is written with no declared range: write "
                     "out(chunks=blocks) or out(rows=blocks*R) (a reduction into one element "
                     "cannot be split: write per-block partial results with out(chunks=blocks) "
                     "and reduce them in a second kernel)",
                     i + 1, p->name[0] ? p->name : "?");
            return;
        }
    }
}

pg_status pg_kernel_split(pg_kernel *h, const char *mode) {
    pg__error_clear();
    int m = !mode                      ? -2
            : !strcmp(mode, "auto")    ? 1
            : !strcmp(mode, "off")     ? 0
            : !strcmp(mode, "on")      ? 2
            : !strcmp(mode, "default") ? -1
                                       : -2;
    if (m == -2)
        return pg__error(PG_ERROR_ARGUMENT,
                         "pg_kernel_split: mode '%s': expected auto, on, off or default (the "
                         "runtime's option split)",
                         mode ? mode : "(null)");
    pg__kernel *k = pg__enter_kernel(h, "pg_kernel_split");
    if (!k)
        return PG_ERROR_STATE;
    pg_status st = PG_OK;
    if (m == 2 && !k->splittable) {
        char why[384];
        why_not(k, why, sizeof why);
        st = pg__error(PG_ERROR_ARGUMENT, "pg_kernel_split: kernel '%s' cannot be split: %s",
                       k->name, why);
    } else {
        k->split = m;
    }
    pg__leave(k->rt);
    return st;
}

/* The element range [lo, hi) of argument a that blocks [b0, b1) touch through parameter p
 * (T threads per block), clamped to a; the whole of a for a parameter with no range. */
static void range_of(const pg_param_info *p, const pg__array *a, uint64_t threads, uint64_t b0,
                     uint64_t b1, uint64_t *lo, uint64_t *hi) {
    uint64_t unit = 0, halo = 0;
    if (p->chunk_per_thread) {
        unit = (uint64_t)p->chunk_per_thread * threads;
        halo = (uint64_t)p->halo;
    } else if (p->rows_per_block) {
        uint64_t row = a->ndim > 0 && a->shape[0] > 0 ? a->size / (uint64_t)a->shape[0] : 1;
        unit = (uint64_t)p->rows_per_block * row;
        halo = (uint64_t)p->halo * row;
    }
    if (!unit) {
        *lo = 0;
        *hi = a->size;
        return;
    }
    uint64_t l = b0 * unit, h = b1 * unit;
    l = l > halo ? l - halo : 0;
    h += halo;
    *lo = l < a->size ? l : a->size;
    *hi = h < a->size ? h : a->size;
}

/* Cut c's arrays at the ends of the ranges blocks [b0, b1) touch. Every part's cuts come
 * before any part binds its pieces: a later cut would supersede a piece bound already. */
static pg_status cut_part(pg__runtime *rt, const pg__comp *c, uint64_t b0, uint64_t b1) {
    uint64_t threads = (uint64_t)c->block.x * c->block.y * c->block.z;
    for (int s = 0; s < c->nslots; s++) {
        if (c->slot_arg[s] < 0)
            continue;
        pg__array *a = c->args[c->slot_arg[s]].array;
        uint64_t lo, hi;
        range_of(&c->kernel->params[s], a, threads, b0, b1, &lo, &hi);
        pg_status st;
        if (lo < hi && ((st = pg__array_cut(rt, a->store, a->off + lo)) ||
                        (st = pg__array_cut(rt, a->store, a->off + hi))))
            return st;
    }
    return PG_OK;
}

/* Part of c on device dev over blocks [b0, b1): its pieces bound per parameter. */
static pg_status make_part(pg__runtime *rt, const pg__comp *c, int dev, uint64_t b0, uint64_t b1,
                           pg__comp **out) {
    pg__comp *p = pg__comp_clone(rt, c);
    if (!p)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    const pg__kernel *k = c->kernel;
    uint64_t threads = (uint64_t)c->block.x * c->block.y * c->block.z;
    pg__carg part[PG__MAX_PARAMS];
    int n = 0;
    pg_status st = PG_OK;
    p->slot_shift = pg__calloc((size_t)c->nslots, sizeof *p->slot_shift);
    if (!p->slot_shift)
        st = pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    for (int s = 0; !st && s < c->nslots; s++) {
        if (c->slot_arg[s] < 0)
            continue;
        const pg_param_info *prm = &k->params[s];
        pg__array *a = c->args[c->slot_arg[s]].array;
        pg__array *r = a->store;
        uint64_t lo, hi;
        range_of(prm, a, threads, b0, b1, &lo, &hi);
        pg_access acc = prm->access;
        if (lo >= hi) { /* these blocks touch none of it: a read of the piece there stands in */
            lo = lo < a->size ? lo : a->size - 1;
            hi = lo + 1;
            acc = PG_ACCESS_IN;
        }
        int first = -1;
        for (pg__array *q = pg__array_piece_at(r, a->off + lo);;) {
            int j = 0;
            while (j < n && part[j].array != q)
                j++;
            if (j == n && n == PG__MAX_PARAMS) {
                st = pg__error(PG_ERROR_ARGUMENT,
                               "kernel '%s': a part of its split launch touches more than %d "
                               "pieces of its arrays; make fewer views of them",
                               k->name, PG__MAX_PARAMS);
                break;
            }
            if (j == n)
                part[n++] = (pg__carg){q, 0};
            part[j].access |= acc;
            if (first < 0) {
                first = j;
                p->slot_shift[s] = q->off - a->off;
            }
            if (q->off + q->size >= a->off + hi || q == r)
                break;
            q = pg__array_piece_at(r, q->off + q->size);
        }
        p->slot_arg[s] = (int8_t)first;
        p->slots[s] = hi - lo; /* check=bounds: the range is what the part may touch */
    }
    pg__carg *dst = NULL;
    if (!st) {
        dst = n <= PG__INLINE ? p->args_in : pg__malloc((size_t)n * sizeof *dst);
        if (!dst)
            st = pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    if (st) {
        pg__comp_unref(rt, p);
        return st;
    }
    for (int j = 0; j < n; j++)
        pg__array_ref(part[j].array);
    for (int i = 0; i < p->nargs; i++)
        pg__array_unref(p->args[i].array);
    if (p->args != p->args_in)
        pg__free(p->args);
    memcpy(dst, part, (size_t)n * sizeof *dst);
    p->args = dst;
    p->nargs = n;
    p->fits = 1u << dev;
    p->block_first = b0;
    p->block_count = b1 - b0;
    p->parts = 1; /* numbered by the caller */
    *out = p;
    return PG_OK;
}

/* Work held back behind a host mapping, or a mapping open on one of c's arrays: the parts
 * would cut pieces that such work holds (cuts are refused then, and a user's slice after them
 * would be), so the launch runs whole, held back as any launch would be. */
static int mapped(const pg__runtime *rt, const pg__comp *c) {
    if (rt->pending_head)
        return 1;
    for (int i = 0; i < c->nargs; i++) {
        pg__array *r = c->args[i].array->store;
        if (r->map_count)
            return 1;
        for (int j = 0; r->pieces && j < r->npieces; j++)
            if (r->pieces[j]->map_count)
                return 1;
    }
    return 0;
}

/* Parts per device, at most, where its range's inputs come over a link; and the bytes to copy
 * that make one more part (copy and compute then overlap as over a script's partitions). */
#define PIPE_PARTS 8
#define PIPE_BYTES (UINT64_C(64) << 20)
#define MAX_PARTS 64

/* The bytes of c's inputs that blocks [b0, b1) read and that are not current on device dev
 * (after the cuts at the range's ends: whole pieces). */
static uint64_t missing_bytes(const pg__comp *c, int dev, uint64_t b0, uint64_t b1) {
    uint64_t threads = (uint64_t)c->block.x * c->block.y * c->block.z, bytes = 0;
    for (int s = 0; s < c->nslots; s++) {
        const pg_param_info *prm = &c->kernel->params[s];
        if (c->slot_arg[s] < 0 || !(prm->access & PG_ACCESS_IN))
            continue;
        pg__array *a = c->args[c->slot_arg[s]].array;
        pg__array *r = a->store;
        uint64_t lo, hi;
        range_of(prm, a, threads, b0, b1, &lo, &hi);
        for (uint64_t e = a->off + lo; e < a->off + hi;) {
            pg__array *q = pg__array_piece_at(r, e);
            uint64_t end = q->off + q->size < a->off + hi ? q->off + q->size : a->off + hi;
            if (!q->fresh && !(q->valid & PG__LOC_BIT(PG__LOC(dev))))
                bytes += (end - e) * pg_dtype_size(a->dtype);
            e = end;
        }
    }
    return bytes;
}

/* The bounds of each device's range of c's nblocks blocks (devs[0..n)): proportional to the
 * models' predictions for an equal share when every device has one for this kernel (measured
 * throughput), else to the devices' throughput classes measured at start-up; the kernel's last
 * split for the same grid and devices is kept unless a share moved by more than
 * PG__SPLIT_KEEP (policies/split_shares.c). */
static void shares(pg__runtime *rt, const pg__comp *c, const int *devs, int n, uint64_t nblocks,
                   uint64_t *bound) {
    pg__kernel *k = c->kernel;
    double w[PG_MAX_DEVICES];
    uint64_t share_bytes = pg__models_args_bytes(c) / (uint64_t)n;
    int measured = 1;
    uint32_t mask = 0;
    for (int i = 0; i < n; i++) {
        int64_t p = pg__models_predict(rt, k->name, devs[i], share_bytes);
        measured &= p > 0;
        w[i] = p > 0 ? 1e9 / (double)p : 0;
        mask |= 1u << devs[i];
    }
    for (int i = 0; !measured && i < n; i++)
        w[i] = pg__models_cold_rate(rt, devs[i]);
    int same = k->split_nblocks == nblocks && k->split_devs == mask;
    pg__split_shares(nblocks, n, w, same ? k->split_lo : NULL, bound);
    k->split_nblocks = nblocks;
    k->split_devs = mask;
    memcpy(k->split_lo, bound, sizeof(uint64_t) * (size_t)(n + 1));
}

pg_status pg__split_submit(pg__runtime *rt, pg__comp *c, int *done) {
    *done = 0;
    pg__kernel *k = c->kernel;
    int mode = k->split >= 0 ? k->split : rt->opt.split;
    if (!mode)
        return PG_OK;
    int devs[PG_MAX_DEVICES], ndev = 0;
    for (int d = 0; d < rt->ndev; d++)
        if ((c->fits >> d & 1) && !rt->dev[d].failed)
            devs[ndev++] = d;
    uint64_t nblocks = (uint64_t)c->grid.x * c->grid.y * c->grid.z;
    const char *why = !rt->ops->launch_range ? "the devices cannot run a range of a grid's blocks"
                      : rt->ops->range_wrapper && !k->wrapped
                          ? "it was not built for ranges of blocks on these devices"
                      : rt->ranks     ? "with several ranks a launch runs on one rank"
                      : ndev < 1      ? "it fits on no device that works"
                      : nblocks < 2   ? "its grid has one block"
                      : mapped(rt, c) ? "its arrays are mapped on the host, or work is held "
                                        "back behind a mapping"
                                      : NULL;
    if (why)
        return mode == 2 ? pg__error(PG_ERROR_ARGUMENT,
                                     "kernel '%s' was asked to split (pg_kernel_split on) but "
                                     "cannot: %s",
                                     k->name, why)
                         : PG_OK;
    /* Ranges proportional to each device's throughput for this kernel, contiguous in device
     * order, and the same from launch to launch while the throughputs say about the same, so
     * that the ranges one launch writes are where the next one reads them. */
    int ndevparts = nblocks < (uint64_t)ndev ? (int)nblocks : ndev;
    uint64_t bound[PG_MAX_DEVICES + 1];
    shares(rt, c, devs, ndevparts, nblocks, bound);
    uint64_t lo[MAX_PARTS + 1];
    int dev_of[MAX_PARTS], parts = 0;
    pg_status st = PG_OK;
    for (int i = 0; !st && i < ndevparts; i++)
        if (bound[i + 1] > bound[i])
            st = cut_part(rt, c, bound[i], bound[i + 1]);
    /* A device whose range's inputs must come over a link gets its range in several parts, so
     * that the copy of one overlaps the blocks of the one before (as a script's partitions do):
     * one part per PIPE_BYTES to copy, at most PIPE_PARTS. */
    for (int i = 0; !st && i < ndevparts; i++) {
        uint64_t b0 = bound[i], b1 = bound[i + 1];
        if (b1 <= b0) /* too slow for even one block of this grid */
            continue;
        uint64_t sub = missing_bytes(c, devs[i], b0, b1) / PIPE_BYTES;
        sub = sub < 1 ? 1 : sub > PIPE_PARTS ? PIPE_PARTS : sub;
        sub = sub > b1 - b0 ? b1 - b0 : sub;
        if (sub > (uint64_t)(MAX_PARTS / ndevparts))
            sub = (uint64_t)(MAX_PARTS / ndevparts);
        for (uint64_t j = 0; j < sub && parts < MAX_PARTS; j++) {
            lo[parts] = b0 + (b1 - b0) * j / sub;
            dev_of[parts++] = devs[i];
        }
        lo[parts] = b1;
    }
    if (!st && parts < 2) /* one device and nothing to pipeline: the launch runs whole */
        return mode == 2 ? pg__error(PG_ERROR_ARGUMENT,
                                     "kernel '%s' was asked to split (pg_kernel_split on) but "
                                     "cannot: it fits on one device only",
                                     k->name)
                         : PG_OK;
    for (int i = 0; !st && i < parts; i++)
        st = cut_part(rt, c, lo[i], lo[i + 1]);
    pg__comp *pc[MAX_PARTS] = {0};
    for (int i = 0; !st && i < parts; i++) {
        st = make_part(rt, c, dev_of[i], lo[i], lo[i + 1], &pc[i]);
        if (!st) {
            pc[i]->part = i + 1;
            pc[i]->parts = parts;
        }
    }
    for (int i = 0; !st && i < parts; i++) {
        st = pg__exec_submit(rt, pc[i]);
        /* A part after the first that cannot be issued (its device failed meanwhile, or has
         * no room) goes to another device: the parts before it ran, and a failed call must
         * change nothing, so the call is completed rather than left half done. The first
         * part's failure is the call's: nothing ran. */
        for (int tries = 0; st && i && tries < rt->ndev; tries++) {
            uint32_t ok = 0;
            for (int d = 0; d < rt->ndev; d++)
                if ((c->fits >> d & 1) && !rt->dev[d].failed && !(pc[i]->fits >> d & 1))
                    ok |= 1u << d;
            pg__comp *q = NULL;
            if (!ok || make_part(rt, c, __builtin_ctz(ok), pc[i]->block_first,
                                 pc[i]->block_first + pc[i]->block_count, &q))
                break;
            q->part = i + 1;
            q->parts = parts;
            pg__comp_unref(rt, pc[i]);
            pc[i] = q;
            pg__error_clear();
            st = pg__exec_submit(rt, q);
        }
        if (!st && rt->opt.sync)
            st = pg__wait_comp(rt, pc[i]);
        if (st && i)
            st = pg__error_wrap(st,
                                "kernel '%s': part %d of %d of a split launch (the parts "
                                "before it were issued; no device could take this one)",
                                k->name, i + 1, parts);
    }
    for (int i = 0; i < parts; i++)
        if (pc[i])
            pg__comp_unref(rt, pc[i]);
    *done = 1;
    return st;
}
