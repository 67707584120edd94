/* gemm.c: the tiled GEMM (pg_linalg_gemm). C is cut into tiles of rows; each tile is a built-in
 * gemm task (linalg/blas.c, gemm_tile_*) on views — C's rows, A's rows (all of A with an offset
 * when trans_a: a column block of a row-major array is no view) and all of B — launched on the
 * device the model (linalg/gemm_plan.c) assigns it, with its input copies on the device's copy
 * stream so a device fetches its tiles in order while earlier ones compute, and each finished
 * tile copied back to C's home right after it (a prefetch) while the next computes. Nothing
 * here moves data or orders work itself: dependencies, copies, reuse of B and of rows already
 * on a device are the runtime's coherence acting on the views. Public calls only: a library on
 * the runtime, as cuBLASXt is on cuBLAS (linalg/linalg.h). */
#include "linalg/gemm_plan.h"
#include "linalg/linalg.h"

#include "base/error.h"

#include <stdio.h>
#include <string.h>

void pg_gemm_options_init(pg_gemm_options *o) {
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->alpha = 1.0;
    o->metric = PG_GEMM_PERF;
}

typedef struct operand {
    pg_array_desc d;
    const char *name;
} operand;

static pg_status describe(pg_array *h, const char *name, operand *o) {
    o->name = name;
    if (!h)
        return pg__error(PG_ERROR_ARGUMENT, "pg_linalg_gemm: %s is NULL", name);
    pg_status st = pg_array_describe(h, &o->d);
    if (st)
        return pg__error_wrap(st, "pg_linalg_gemm: %s", name);
    if (o->d.ndim != 2)
        return pg__error(PG_ERROR_ARGUMENT,
                         "pg_linalg_gemm: %s must be a 2-D array, it has %d "
                         "dimension%s",
                         name, o->d.ndim, o->d.ndim == 1 ? "" : "s");
    if (o->d.dtype != PG_FLOAT32 && o->d.dtype != PG_FLOAT64)
        return pg__error(PG_ERROR_ARGUMENT,
                         "pg_linalg_gemm: %s is an array of %s; float32 or float64 are supported",
                         name, pg_dtype_name(o->d.dtype));
    return PG_OK;
}

/* The fastest way to device d (location d + 1) from where `valid` says the value is: 0 when it
 * is already there; the host's link when no single location holds all of it. */
static void link_to(uint32_t valid, int d, int nloc, const double *bw, const double *lat_us,
                    double *gbps, double *lat_s) {
    int to = d + 1;
    if (valid >> to & 1) {
        *gbps = 0;
        return;
    }
    if (!valid)
        valid = 1;
    double best = -1, l = 0;
    for (int from = 0; from < nloc; from++)
        if (valid >> from & 1 && bw[from * nloc + to] > best) {
            best = bw[from * nloc + to];
            l = lat_us[from * nloc + to];
        }
    *gbps = best > 0 ? best : 1e-3;
    if (l * 1e-6 > *lat_s)
        *lat_s = l * 1e-6;
}

/* C's home: where its tiles go back to — the host when its value is there (or nowhere whole),
 * else the first device that holds it. A location index (0 host, d + 1). */
static int home_of(uint32_t valid) {
    if (!valid || valid & 1)
        return 0;
    return __builtin_ctz(valid);
}

static pg_status gather(pg_runtime *rt, const operand *A, const operand *B, const operand *C,
                        const pg_gemm_options *o, pg__gemm_problem *p, int *home,
                        int *from_models) {
    pg_device_info info[PG_MAX_DEVICES];
    int ndev = 0, nloc = 0;
    pg_status st = pg_runtime_devices(rt, info, PG_MAX_DEVICES, &ndev);
    if (st)
        return st;
    if (ndev > PG_MAX_DEVICES)
        ndev = PG_MAX_DEVICES;
    if (o->devices >> ndev)
        return pg__error(PG_ERROR_ARGUMENT,
                         "pg_linalg_gemm: devices = 0x%x names a device past the runtime's %d",
                         o->devices, ndev);
    double bwl[(PG_MAX_DEVICES + 1) * (PG_MAX_DEVICES + 1)],
        latl[(PG_MAX_DEVICES + 1) * (PG_MAX_DEVICES + 1)];
    if ((st = pg_runtime_interconnect(rt, &nloc, bwl, latl)))
        return st;
    p->ndev = ndev;
    *home = home_of(C->d.valid);
    for (int d = 0; d < ndev; d++) {
        pg__gemm_dev *dv = &p->dev[d];
        memset(dv, 0, sizeof *dv);
        dv->allowed = !o->devices || (o->devices >> d & 1);
        if (!dv->allowed)
            continue;
        link_to(A->d.valid, d, nloc, bwl, latl, &dv->gbps_a, &dv->latency_s);
        link_to(B->d.valid, d, nloc, bwl, latl, &dv->gbps_b, &dv->latency_s);
        link_to(C->d.valid, d, nloc, bwl, latl, &dv->gbps_c_in, &dv->latency_s);
        if (*home == d + 1) {
            dv->gbps_c_out = 0;
        } else {
            dv->gbps_c_out = bwl[(d + 1) * nloc + *home];
            if (latl[(d + 1) * nloc + *home] * 1e-6 > dv->latency_s)
                dv->latency_s = latl[(d + 1) * nloc + *home] * 1e-6;
            if (dv->gbps_c_out <= 0)
                dv->gbps_c_out = 1e-3;
        }
    }
    /* Devices a power budget (option power_limit) leaves out take no tile; a failed device
     * neither. */
    uint32_t usable = 0;
    const pg__linalg_facts *f = NULL;
    if ((st = pg_runtime_devices_usable(rt, &usable)) || (st = pg__linalg_facts_get(rt, &f)))
        return st;
    pg_stats stats; /* each device's power under load (metric edp) */
    if (o->metric == PG_GEMM_EDP && (st = pg_runtime_stats(rt, &stats)))
        return st;
    for (int d = 0; d < ndev; d++) {
        if (!(usable >> d & 1))
            p->dev[d].allowed = 0;
        if (!p->dev[d].allowed)
            continue;
        if (o->metric == PG_GEMM_EDP)
            p->dev[d].watts = stats.power_watts[d]; /* 0: unknown */
        /* What one launch's arguments may take there together. */
        p->dev[d].mem_bytes = d < f->ndev ? f->memory[d] : 0;
    }
    /* Tile durations the performance models already know (the tile task's measured runs at
     * the size bucket a tile of that height falls in). */
    int64_t cand[PG__GEMM_TILE_CANDIDATES];
    int nc = p->tile > 0 ? 1 : pg__gemm_tile_candidates(p->m, cand);
    if (p->tile > 0)
        cand[0] = p->tile < p->m ? p->tile : p->m;
    const char *task = p->elem == 8 ? (p->c_in ? "gemm_tile_f64" : "gemm_tile_out_f64")
                                    : (p->c_in ? "gemm_tile_f32" : "gemm_tile_out_f32");
    int known_everywhere = 1;
    for (int d = 0; d < ndev; d++) {
        if (!p->dev[d].allowed)
            continue;
        for (int j = 0; j < nc; j++) {
            uint64_t e = (uint64_t)p->elem, t = (uint64_t)cand[j];
            uint64_t bytes = (p->trans_a ? (uint64_t)p->m : t) * (uint64_t)p->k * e +
                             (uint64_t)p->k * (uint64_t)p->n * e + t * (uint64_t)p->n * e;
            uint64_t ns = 0;
            if ((st = pg_runtime_model_predict(rt, task, d, bytes, &ns)))
                return st;
            p->dev[d].model_s[j] = (double)ns * 1e-9;
            known_everywhere &= ns > 0;
        }
    }
    *from_models = known_everywhere;
    /* Rates for what the models do not know (measured once per device class and dtype). */
    for (int d = 0; d < ndev; d++)
        if (p->dev[d].allowed && !known_everywhere &&
            (st = pg__gemm_rate(rt, d, A->d.dtype, &p->dev[d].gflops, &p->dev[d].overhead_s)))
            return st;
    return PG_OK;
}

/* One call of the tile task: rows [r0, r1) of C, K's rows [p0, p1) (all of K but for a
 * device's first tile, which takes B in chunks as it arrives). at: the tile's own copy of its
 * rows of op(A) (staged), else av (a view of A's rows), else A. */
static pg_status issue_call(pg_kernel *k, int dev, pg_array *a, pg_array *av, pg_array *at,
                            pg_array *b, pg_array *cv, const pg__gemm_problem *p,
                            const pg_gemm_options *o, int64_t r0, int64_t r1, int64_t p0,
                            int64_t p1, double beta) {
    int64_t off = p->trans_a ? p0 * p->m + r0 : p0;
    int64_t lda = p->trans_a ? p->m : (p->k ? p->k : 1);
    if (at && p->trans_a) { /* k x (r1 - r0) */
        off = p0 * (r1 - r0);
        lda = r1 - r0;
    }
    if (at)
        av = at;
    pg_arg args[12] = {pg_arg_array(av ? av : a),
                       pg_arg_array(b),
                       pg_arg_array(cv),
                       pg_arg_int(r1 - r0),
                       pg_arg_int(p->n),
                       pg_arg_int(p1 - p0),
                       pg_arg_int(o->trans_a != 0),
                       pg_arg_int(o->trans_b != 0),
                       pg_arg_double(o->alpha),
                       pg_arg_double(beta),
                       pg_arg_int(off),
                       pg_arg_int(lda)};
    pg_dim3 one = {1, 1, 1}; /* a task: grid and block are ignored */
    return pg_kernel_launch_on(k, dev, one, one, 0, args, 12, PG_LAUNCH_PREFETCH);
}

/* The built-in tile task `name` of rt, made once per runtime and kept with it
 * (pg_runtime_attach, under the address of its slot here; a task's signature is parsed when it
 * is made: per call, that was most of a small GEMM's issue cost, 28 of 30 us on a CPU device).
 * The runtime frees it with its other kernels, so nothing is released with the key. */
static const char tile_keys[4];

static pg_status tile_task(pg_runtime *rt, int slot, const char *name, pg_kernel **out) {
    void *kept = NULL;
    pg_status st = pg_runtime_attached(rt, &tile_keys[slot], &kept);
    if (st || kept) {
        *out = kept;
        return st;
    }
    pg_kernel *k = NULL;
    if ((st = pg_task_builtin(rt, name, &k)))
        return st;
    if ((st = pg_runtime_attach(rt, &tile_keys[slot], k, NULL, &kept))) {
        char why[2048];
        snprintf(why, sizeof why, "%s", pg_last_error());
        pg_kernel_free(k); /* a public call: clears the message, restored below */
        return pg__error(st, "%s", why);
    }
    if (kept != k) /* another thread made it meanwhile */
        pg_kernel_free(k);
    *out = kept;
    return PG_OK;
}

/* Free a view once its calls are made. pg_array_free is a public call, which clears the
 * thread's message on entry: after a failure (st) the cause is kept, for the tile's context to
 * wrap. */
static void free_view(pg_array *v, pg_status st) {
    if (!v)
        return;
    char why[2048];
    if (st)
        snprintf(why, sizeof why, "%s", pg_last_error());
    pg_array_free(v);
    if (st)
        pg__error(st, "%s", why);
}

/* A staged tile's own copy of rows [r0, r1) of op(A) (rows x k; k x rows when trans_a),
 * filled on the host: A is read where it is, once per tile, so a device holds only the tile's
 * rows of it. */
static pg_status stage_rows(pg_runtime *rt, pg_array *a, const pg__gemm_problem *p, pg_dtype dt,
                            int64_t r0, int64_t r1, pg_array **out) {
    int64_t rows = r1 - r0;
    int64_t shape[2] = {p->trans_a ? p->k : rows, p->trans_a ? rows : p->k};
    size_t e = (size_t)p->elem;
    pg_array *at = NULL;
    const char *src = NULL;
    char *dst = NULL;
    pg_status st = pg_array_new(rt, dt, 2, shape, &at);
    if (!st)
        st = pg_array_map(a, PG_ACCESS_IN, (void **)&src);
    if (!st && (st = pg_array_map(at, PG_ACCESS_OUT, (void **)&dst)))
        src = NULL;
    if (!st && p->trans_a)
        for (int64_t kk = 0; kk < p->k; kk++)
            memcpy(dst + (size_t)(kk * rows) * e, src + (size_t)(kk * p->m + r0) * e,
                   (size_t)rows * e);
    else if (!st)
        memcpy(dst, src + (size_t)(r0 * p->k) * e, (size_t)(rows * p->k) * e);
    char why[2048];
    if (st)
        snprintf(why, sizeof why, "%s", pg_last_error());
    if (dst)
        pg_array_unmap(at);
    if (src)
        pg_array_unmap(a);
    if (st) {
        if (at)
            pg_array_free(at);
        return pg__error_wrap(pg__error(st, "%s", why),
                              "copying rows %lld to %lld of op(a) into an array of their own",
                              (long long)r0, (long long)r1);
    }
    *out = at;
    return PG_OK;
}

static pg_status issue_tiles(pg_runtime *rt, pg_array *a, pg_array *b, pg_array *c,
                             const pg__gemm_problem *p, const pg_gemm_options *o,
                             const pg__gemm_plan *pl, int home, pg_dtype dt) {
    int f64 = dt == PG_FLOAT64;
    /* C read too (beta != 0, or a later chunk of K adding to it) or only written */
    pg_kernel *k_inout = NULL, *k_out = NULL;
    pg_status st = tile_task(rt, f64, f64 ? "gemm_tile_f64" : "gemm_tile_f32", &k_inout);
    if (!st && !p->c_in)
        st = tile_task(rt, 2 + f64, f64 ? "gemm_tile_out_f64" : "gemm_tile_out_f32", &k_out);
    uint32_t started = 0;
    for (int64_t i = 0; !st && i < pl->tiles; i++) {
        int64_t r0 = i * pl->tile, r1 = r0 + pl->tile < p->m ? r0 + pl->tile : p->m;
        int dev = pl->owner[i];
        int kc =
            started >> dev & 1 ? 1 : pg__gemm_k_chunks(p->k, p->trans_b, p->dev[dev].gbps_b > 0);
        started |= 1u << dev;
        pg_array *cv = NULL, *av = NULL, *at = NULL;
        int whole = pl->tiles == 1; /* one tile: the arrays themselves, no cut */
        st = whole ? PG_OK : pg_array_slice(c, r0, r1, &cv);
        if (!st && !whole && pl->stage_a)
            st = stage_rows(rt, a, p, dt, r0, r1, &at);
        else if (!st && !whole && !p->trans_a)
            st = pg_array_slice(a, r0, r1, &av);
        for (int ch = 0; !st && ch < kc; ch++) {
            int64_t p0 = p->k * ch / kc, p1 = p->k * (ch + 1) / kc;
            pg_array *bv = NULL;
            if (kc > 1)
                st = pg_array_slice(b, p0, p1, &bv);
            if (!st)
                st = issue_call(ch || p->c_in ? k_inout : k_out, dev, a, av, at, bv ? bv : b,
                                cv ? cv : c, p, o, r0, r1, p0, p1, ch ? 1.0 : o->beta);
            free_view(bv, st);
        }
        /* The tile goes home while the next computes (a hint: never an error of the GEMM). */
        if (!st && home != dev + 1 &&
            pg_array_prefetch(cv ? cv : c, home == 0 ? PG_HOST : home - 1) != PG_OK)
            pg__error_clear();
        free_view(cv, st);
        free_view(av, st);
        free_view(at, st); /* the runtime keeps it until the tile ran */
        if (st)
            st = pg__error_wrap(st,
                                "pg_linalg_gemm: tile %lld of %lld (rows %lld to %lld) on "
                                "device %d (the tiles before it were issued)",
                                (long long)i, (long long)pl->tiles, (long long)r0, (long long)r1,
                                dev);
    }
    return st;
}

pg_status pg_linalg_gemm(pg_runtime *rt, pg_array *a, pg_array *b, pg_array *c,
                         const pg_gemm_options *opt, pg_gemm_report *report) {
    pg__error_clear();
    pg_gemm_options o;
    if (opt)
        o = *opt;
    else
        pg_gemm_options_init(&o);
    if (report)
        memset(report, 0, sizeof *report);
    if (!rt)
        return pg__error(PG_ERROR_ARGUMENT, "pg_linalg_gemm: rt is NULL");
    /* Its views, rate measurement and write-back prefetches are host-side calls a recording
     * refuses: a GEMM is not recorded (record its tile tasks with pg_task_builtin instead). */
    int recording = 0;
    pg_status st = pg_graph_recording(rt, &recording);
    if (st)
        return pg__error_wrap(st, "pg_linalg_gemm");
    if (recording)
        return pg__error(PG_ERROR_STATE,
                         "pg_linalg_gemm: not allowed while this thread records a graph "
                         "(pg_graph_begin): the recorded calls have not run; end the recording "
                         "(pg_graph_end) first");
    operand A, B, C;
    st = describe(a, "a", &A);
    if (!st)
        st = describe(b, "b", &B);
    if (!st)
        st = describe(c, "c", &C);
    if (st)
        return st;
    if (A.d.dtype != B.d.dtype || A.d.dtype != C.d.dtype)
        return pg__error(PG_ERROR_ARGUMENT,
                         "pg_linalg_gemm: the arrays must have one dtype, got a %s, b %s, c %s",
                         pg_dtype_name(A.d.dtype), pg_dtype_name(B.d.dtype),
                         pg_dtype_name(C.d.dtype));
    /* C's tiles are written while other tiles still read A and B: sharing elements would race.
     * Views of one array share its id, so this refuses disjoint views of one array too. */
    if (C.d.id == A.d.id || C.d.id == B.d.id)
        return pg__error(PG_ERROR_ARGUMENT,
                         "pg_linalg_gemm: c is (a view of) the same array as %s: the result must "
                         "be an array of its own",
                         C.d.id == A.d.id ? "a" : "b");
    if (o.metric != PG_GEMM_PERF && o.metric != PG_GEMM_EDP)
        return pg__error(PG_ERROR_ARGUMENT,
                         "pg_linalg_gemm: metric %d is neither PG_GEMM_PERF nor PG_GEMM_EDP",
                         (int)o.metric);
    if (o.tile < 0)
        return pg__error(PG_ERROR_ARGUMENT,
                         "pg_linalg_gemm: tile = %lld must be >= 0 (0: the "
                         "model chooses)",
                         (long long)o.tile);
    int64_t m = o.trans_a ? A.d.shape[1] : A.d.shape[0],
            k = o.trans_a ? A.d.shape[0] : A.d.shape[1];
    int64_t kb = o.trans_b ? B.d.shape[1] : B.d.shape[0],
            n = o.trans_b ? B.d.shape[0] : B.d.shape[1];
    if (m != C.d.shape[0] || n != C.d.shape[1] || k != kb)
        return pg__error(PG_ERROR_ARGUMENT,
                         "pg_linalg_gemm: shapes do not fit: op(a) is %lld x %lld, op(b) %lld x "
                         "%lld, c %lld x %lld",
                         (long long)m, (long long)k, (long long)kb, (long long)n,
                         (long long)C.d.shape[0], (long long)C.d.shape[1]);
    if (!m || !n)
        return PG_OK; /* C has no elements */
    pg__gemm_problem p;
    memset(&p, 0, sizeof p);
    p.m = m;
    p.n = n;
    p.k = k;
    p.elem = (int)pg_dtype_size(A.d.dtype);
    p.trans_a = o.trans_a != 0;
    p.trans_b = o.trans_b != 0;
    p.c_in = o.beta != 0;
    p.tile = o.tile;
    p.metric = o.metric;
    if (p.tile > 0 && (m + p.tile - 1) / p.tile > PG__GEMM_MAX_TILES)
        return pg__error(PG_ERROR_ARGUMENT,
                         "pg_linalg_gemm: tile = %lld rows cuts c's %lld rows into more than %d "
                         "tiles (views cut arrays for good, and a launch covers at most 64 "
                         "pieces): use a tile of at least %lld rows, or 0",
                         (long long)p.tile, (long long)m, PG__GEMM_MAX_TILES,
                         (long long)((m + PG__GEMM_MAX_TILES - 1) / PG__GEMM_MAX_TILES));
    int home = 0, from_models = 0;
    if ((st = gather(rt, &A, &B, &C, &o, &p, &home, &from_models)))
        return st;
    pg__gemm_plan pl;
    if ((st = pg__gemm_plan_make(&p, &pl)))
        return st;
    if ((st = issue_tiles(rt, a, b, c, &p, &o, &pl, home, A.d.dtype)))
        return st;
    if (report) {
        report->devices = pl.devices;
        report->ndevices = pl.ndevices;
        report->tile = pl.tile;
        report->tiles = pl.tiles;
        for (int64_t i = 0; i < pl.tiles; i++) {
            int64_t r0 = i * pl.tile;
            report->rows[pl.owner[i]] += (r0 + pl.tile < m ? pl.tile : m - r0);
        }
        report->predicted_s = pl.predicted_s;
        report->predicted_j = pl.predicted_j;
        for (int d = 0; d < p.ndev; d++)
            report->gflops[d] = pl.devices >> d & 1 ? p.dev[d].gflops : 0;
        report->from_models = from_models;
    }
    return PG_OK;
}
