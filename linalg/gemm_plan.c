/* gemm_plan.c: the tiled GEMM's model. Per device a tile is three stages — its inputs in over
 * the links (A's rows, and C's when beta != 0), the GEMM, C's rows out to C's home — pipelined
 * over the tiles a device computes (PARALiA / CoCoPeLia: a device's time is set by the slowest
 * of compute, transfers in and transfers out, plus filling and draining the pipeline). What
 * every tile reads whole comes once, with the device's first tile: A (when transposed) before
 * it, B in chunks that the first tile consumes as they arrive (pg__gemm_k_chunks). Tiles go, in
 * order, to the device where each would finish first (list scheduling), so faster devices and
 * devices nearer the data take more. Every tile height and every prefix of the devices ordered
 * by how fast each would do the whole GEMM alone is evaluated: a few hundred simulated tiles. */
#include "linalg/gemm_plan.h"

#include "base/error.h"

#include <stdio.h>
#include <string.h>

int pg__gemm_tile_candidates(int64_t m, int64_t out[PG__GEMM_TILE_CANDIDATES]) {
    int n = 0;
    if (m < 1)
        return 0;
    out[n++] = m;
    for (int l = 40; l >= PG__GEMM_TILE_LOG_MIN && n < PG__GEMM_TILE_CANDIDATES; l--) {
        int64_t t = (int64_t)1 << l;
        if (t < m && (m + t - 1) / t <= PG__GEMM_MAX_TILES)
            out[n++] = t;
    }
    return n;
}

int pg__gemm_k_chunks(int64_t k, int trans_b, int b_travels) {
    if (trans_b || !b_travels)
        return 1;
    int64_t c = k / 512; /* chunks of at least 512 rows of B: still GEMMs at full rate */
    return c < 1 ? 1 : c > 8 ? 8 : (int)c;
}

uint64_t pg__gemm_tile_bytes(const pg__gemm_problem *p, int64_t rows, int64_t tiles, int stage_a) {
    uint64_t e = (uint64_t)p->elem, k = (uint64_t)p->k, n = (uint64_t)p->n, m = (uint64_t)p->m;
    uint64_t a = tiles > 1 && stage_a ? (uint64_t)rows * k : m * k;
    return e * (a + k * n + m * n);
}

static double xfer(double bytes, double gbps, double latency) {
    return gbps > 0 ? latency + bytes / (gbps * 1e9) : 0;
}

typedef struct stage {
    double in, comp, out; /* when each stage of the device's last tile ends */
    int tiles;
} stage;

/* The three stage times of a tile of `rows` rows on device d (candidate j of height t). A
 * tile's rows of A travel with it, but for A transposed and not staged (A whole, first). */
static void tile_cost(const pg__gemm_problem *p, const pg__gemm_dev *d, int j, int64_t t,
                      int64_t rows, int staged, double *in, double *comp, double *out) {
    double e = p->elem, r = (double)rows;
    *in = (p->trans_a && !staged ? 0 : xfer(r * (double)p->k * e, d->gbps_a, d->latency_s)) +
          (p->c_in ? xfer(r * (double)p->n * e, d->gbps_c_in, d->latency_s) : 0);
    *out = xfer(r * (double)p->n * e, d->gbps_c_out, d->latency_s);
    if (d->model_s[j] > 0)
        *comp = d->model_s[j] * r / (double)t;
    else
        *comp = d->overhead_s + 2.0 * r * (double)p->n * (double)p->k / (d->gflops * 1e9);
}

/* A device's first tile: A whole first when transposed, the tile's own inputs, then B in
 * chunks, each chunk's share of the GEMM starting once it is in (a call each). */
static stage first_tile(const pg__gemm_problem *p, const pg__gemm_dev *d, double in, double comp,
                        double out, int modeled, int staged) {
    double e = p->elem;
    int kc = pg__gemm_k_chunks(p->k, p->trans_b, d->gbps_b > 0);
    double bx = xfer((double)p->k * (double)p->n * e / kc, d->gbps_b, d->latency_s);
    stage s = {0, 0, 0, 1};
    s.in = (p->trans_a && !staged ? xfer((double)p->m * (double)p->k * e, d->gbps_a, d->latency_s)
                                  : 0) +
           in;
    double per = (comp - d->overhead_s) / kc + d->overhead_s;
    for (int c = 0; c < kc; c++) {
        s.in += bx;
        s.comp = (s.in > s.comp ? s.in : s.comp) + (modeled ? comp / kc : per);
    }
    s.out = s.comp + out;
    return s;
}

/* Schedule every tile of height t (candidate j) on the devices in set[0..ns) whose memory
 * holds such a tile (all of them when !fit); the plan, and its score under the metric (< 0:
 * edp without a device's power, or no device holds a tile). */
static double schedule(const pg__gemm_problem *p, const int *set, int ns, int j, int64_t t,
                       int staged, int fit, pg__gemm_plan *pl) {
    stage st[PG_MAX_DEVICES];
    memset(st, 0, sizeof st);
    memset(pl, 0, sizeof *pl);
    int64_t ntiles = (p->m + t - 1) / t;
    uint64_t need = pg__gemm_tile_bytes(p, t, ntiles, staged);
    for (int64_t i = 0; i < ntiles; i++) {
        int64_t rows = p->m - i * t < t ? p->m - i * t : t;
        int best = -1;
        stage bst = {0, 0, 0, 0};
        for (int s = 0; s < ns; s++) {
            if (fit && p->dev[set[s]].mem_bytes && need > p->dev[set[s]].mem_bytes)
                continue;
            double in, comp, out;
            tile_cost(p, &p->dev[set[s]], j, t, rows, staged, &in, &comp, &out);
            stage n = st[s];
            if (!n.tiles) {
                n = first_tile(p, &p->dev[set[s]], in, comp, out, p->dev[set[s]].model_s[j] > 0,
                               staged);
            } else {
                n.in += in;
                n.comp = (n.in > n.comp ? n.in : n.comp) + comp;
                n.out = (n.comp > n.out ? n.comp : n.out) + out;
                n.tiles++;
            }
            if (best < 0 || n.out < bst.out) {
                best = s;
                bst = n;
            }
        }
        if (best < 0)
            return -1; /* no device of the set holds a tile of this height */
        st[best] = bst;
        pl->owner[i] = (int8_t)set[best];
    }
    pl->stage_a = staged && ntiles > 1;
    pl->tile = t;
    pl->tiles = ntiles;
    double e = 0;
    int known = 1;
    for (int s = 0; s < ns; s++) {
        if (!st[s].tiles)
            continue;
        int d = set[s];
        pl->devices |= 1u << d;
        pl->ndevices++;
        pl->device_s[d] = st[s].out;
        if (st[s].out > pl->predicted_s)
            pl->predicted_s = st[s].out;
        if (p->dev[d].watts > 0)
            e += p->dev[d].watts * st[s].out;
        else
            known = 0;
    }
    pl->predicted_j = known ? e : -1;
    if (p->metric == PG_GEMM_EDP)
        return known ? pl->predicted_j * pl->predicted_s : -1;
    return pl->predicted_s;
}

pg_status pg__gemm_plan_make(const pg__gemm_problem *p, pg__gemm_plan *out) {
    if (p->m < 1 || p->n < 0 || p->k < 0 || p->ndev < 1 || p->ndev > PG_MAX_DEVICES)
        return pg__error(PG_ERROR_INTERNAL, "gemm plan: m=%lld, %d devices", (long long)p->m,
                         p->ndev);
    int64_t cand[PG__GEMM_TILE_CANDIDATES];
    int nc = pg__gemm_tile_candidates(p->m, cand);
    if (p->tile > 0) {
        if ((p->m + p->tile - 1) / p->tile > PG__GEMM_MAX_TILES)
            return pg__error(PG_ERROR_ARGUMENT,
                             "gemm: tile = %lld rows cuts C's %lld rows into more than %d tiles "
                             "(a launch covers at most 64 pieces of arrays): use a tile of at "
                             "least %lld rows",
                             (long long)p->tile, (long long)p->m, PG__GEMM_MAX_TILES,
                             (long long)((p->m + PG__GEMM_MAX_TILES - 1) / PG__GEMM_MAX_TILES));
        nc = 1;
        cand[0] = p->tile < p->m ? p->tile : p->m;
    }
    /* A view of A takes all of A's buffer on a device: where A, B and C whole do not fit a
     * device that may take tiles, each tile gets its own copy of its rows of A instead. */
    int staged = 0;
    uint64_t whole = pg__gemm_tile_bytes(p, p->m, 1, 0), room = 0;
    int roomiest = -1;
    for (int d = 0; d < p->ndev; d++) {
        const pg__gemm_dev *dv = &p->dev[d];
        if (!dv->allowed || (dv->gflops <= 0 && dv->model_s[0] <= 0))
            continue;
        if (dv->mem_bytes && whole > dv->mem_bytes)
            staged = 1;
        if (roomiest < 0 || (room && (!dv->mem_bytes || dv->mem_bytes > room))) {
            roomiest = d;
            room = dv->mem_bytes;
        }
    }
    /* Devices by the time each would take alone (tallest tile, rate model), fastest first. */
    int order[PG_MAX_DEVICES], no = 0;
    double alone[PG_MAX_DEVICES];
    for (int d = 0; d < p->ndev; d++) {
        const pg__gemm_dev *dv = &p->dev[d];
        if (!dv->allowed || (dv->gflops <= 0 && dv->model_s[0] <= 0))
            continue;
        if (p->metric == PG_GEMM_EDP && dv->watts <= 0)
            return pg__error(PG_ERROR_ARGUMENT,
                             "gemm: metric edp needs each device's power, and device %d's is "
                             "unknown (NVML does not read it; option power_watts gives it): use "
                             "metric perf, or leave the device out",
                             d);
        int one[1] = {d};
        pg__gemm_plan tmp;
        alone[d] = schedule(p, one, 1, 0, cand[0], staged, 0, &tmp);
        int i = no++;
        while (i > 0 && alone[order[i - 1]] > alone[d]) {
            order[i] = order[i - 1];
            i--;
        }
        order[i] = d;
    }
    if (!no)
        return pg__error(PG_ERROR_ARGUMENT,
                         "gemm: no device may take it (none allowed, or none has a GEMM rate)");
    double best = -1;
    double score[PG_MAX_DEVICES][PG__GEMM_TILE_CANDIDATES];
    pg__gemm_plan tmp;
    /* A fixed tile's model entry is in slot 0 (the caller looked it up for that height). */
    for (int s = 1; s <= no; s++)
        for (int j = 0; j < nc; j++) {
            score[s - 1][j] = schedule(p, order, s, p->tile > 0 ? 0 : j, cand[j], staged, 1, &tmp);
            if (score[s - 1][j] >= 0 && (best < 0 || score[s - 1][j] < best))
                best = score[s - 1][j];
        }
    if (best < 0) {
        /* Say what did not fit: the shortest tile considered, on the device with most room. */
        int64_t t = cand[nc - 1], tiles = (p->m + t - 1) / t;
        return pg__error(
            PG_ERROR_OUT_OF_MEMORY,
            "gemm: no tile fits a device's memory: a tile takes B (%lld x %lld) and C (%lld x "
            "%lld) whole on its device (a view of an array takes all of the array's buffer "
            "there) and %s; a tile of %lld rows%s needs %llu bytes, more than the %llu bytes "
            "device %d holds (device_memory_limit, else its memory): raise device_memory_limit%s, "
            "or split B's columns into GEMMs of their own",
            (long long)p->k, (long long)p->n, (long long)p->m, (long long)p->n,
            staged && tiles > 1 ? "a copy of its rows of op(A)" : "A whole", (long long)t,
            p->tile > 0 ? " (the tile asked for)" : " (the shortest one considered)",
            (unsigned long long)pg__gemm_tile_bytes(p, t, tiles, staged), (unsigned long long)room,
            roomiest, p->tile > 0 && p->m > 1 ? ", ask for a shorter tile (or none)" : "");
    }
    /* Fewest devices within 2% of the best, then the tallest tile within 2% of the best:
     * a device or a task more that buys almost nothing is not worth its memory and energy. */
    int ps = -1, pj = -1;
    for (int s = 1; s <= no && ps < 0; s++)
        for (int j = 0; j < nc && ps < 0; j++)
            if (score[s - 1][j] >= 0 && score[s - 1][j] <= best * 1.02) {
                ps = s;
                pj = j;
            }
    schedule(p, order, ps, p->tile > 0 ? 0 : pj, cand[pj], staged, 1, out);
    return PG_OK;
}
