/* links.c: the runtime's interconnect matrix — where it comes from (a file named by the
 * `interconnect` option, the measured matrix cached for this set of GPUs, a quick measurement
 * made and cached at first start, or uniform defaults), and the public calls to read it and to
 * measure it again. */
#include "core/links.h"
#include "core/exec.h"
#include "core/handle.h"
#include "core/util.h"
#include "devices/interconnect_measure.h"
#include "devices/registry.h"
#include "nvrtc/kernel_cache.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The quick measurement at first start: a few milliseconds per link, well under a second for
 * eight GPUs, and within ~10% of the full measurement's bandwidth on PCIe and NVLink. */
#define QUICK_BYTES ((size_t)16 << 20)
#define QUICK_REPS 2

static void cache_path(const pg__runtime *rt, char *out, size_t cap) {
    pg_device_info devs[PG_MAX_DEVICES];
    for (int d = 0; d < rt->ndev; d++)
        devs[d] = rt->dev[d].info;
    char name[96];
    pg__interconnect_cache_name(devs, rt->ndev, name, sizeof name);
    snprintf(out, cap, "%s/%s", rt->opt.cache_dir, name);
}

/* Write to a temporary name, then rename: a concurrent process reads the old file or the new
 * one, never half of one. */
static pg_status save_atomic(const pg__interconnect *m, const char *path) {
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    pg_status st = pg__interconnect_save(m, tmp);
    if (!st && rename(tmp, path) != 0) {
        remove(tmp);
        st = pg__error(PG_ERROR_IO, "cannot rename %s to %s", tmp, path);
    }
    return st;
}

static pg_status measure_and_save(pg__runtime *rt, size_t bytes, int reps, const char *path) {
    pg_status st = pg__interconnect_measure(rt->ops, rt->b, rt->ndev, bytes, reps, &rt->ic);
    if (st || !path)
        return st;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = 0;
        pg__kcache_dir(dir); /* created 0700 if missing; data, so saved even if refused */
    }
    return save_atomic(&rt->ic, path);
}

/* Links measured within this fraction of each other are the same hardware to the policies: a
 * quick measurement varies by a few percent between identical links, and without it the
 * fastest-measured host link would win every computation whose inputs are on the host (all of
 * them on one GPU). Real differences (PCIe against NVLink, a slower socket) are far larger. */
#define POLICY_TIE 0.10

static void policy_view_update(pg__runtime *rt) {
    pg__interconnect_equalize(&rt->ic, POLICY_TIE, rt->policy_bw);
}

static pg_status load_links(pg__runtime *rt);

pg_status pg__links_init(pg__runtime *rt) {
    pg_status st = load_links(rt);
    policy_view_update(rt);
    return st;
}

static pg_status load_links(pg__runtime *rt) {
    /* GPU-class devices get GPU defaults, and are measured when their backends want it (not
     * simulated ones: a measurement would time the simulator). */
    int gpu = 0, measure = 1;
    for (int d = 0; d < rt->ndev; d++)
        if (rt->dev[d].info.device_class == PG_CLASS_GPU) {
            gpu = 1;
            measure &= rt->dev[d].entry->measure_links;
        }
    /* Defaults until measured: PCIe-class host links; NVLink-class or shared-memory peers. */
    pg__interconnect_default(&rt->ic, rt->ndev, gpu ? 25.0 : 10.0, gpu ? 100.0 : 10.0);
    const char *opt = rt->opt.interconnect;
    if (!strcmp(opt, "default"))
        return PG_OK;
    if (opt[0])
        return pg__interconnect_load(&rt->ic, opt);
    if (!gpu || !measure)
        return PG_OK; /* CPU devices share one memory system: nothing worth measuring */
    char path[1200];
    cache_path(rt, path, sizeof path);
    if (access(path, R_OK) == 0) {
        pg__interconnect saved = rt->ic;
        if (pg__interconnect_load(&saved, path) == PG_OK) {
            rt->ic = saved;
            pg__log(rt, 1, "interconnect: %s", path);
            return PG_OK;
        }
        pg__log(rt, 1, "interconnect: ignoring unreadable %s: %s", path, pg_last_error());
    }
    pg_status st = measure_and_save(rt, QUICK_BYTES, QUICK_REPS, path);
    if (st) {
        /* A cache that cannot be written is no reason to refuse to run: the measurement (or the
         * defaults, if it failed) stand for this process. */
        pg__log(rt, 1, "interconnect: quick measurement not saved: %s", pg_last_error());
        pg__error_clear();
    } else {
        pg__log(rt, 1, "interconnect: measured, saved as %s", path);
    }
    return PG_OK;
}

pg_status pg_runtime_interconnect(pg_runtime *h, int *nloc, double *gbps, double *latency_us) {
    pg__error_clear();
    if (!nloc)
        return pg__error(PG_ERROR_ARGUMENT, "pg_runtime_interconnect: nloc must not be NULL");
    pg__runtime *rt;
    if (!(rt = pg__enter_runtime(h, "pg_runtime_interconnect")))
        return PG_ERROR_STATE;
    int n = rt->ic.nloc;
    *nloc = n;
    for (int i = 0; i < n * n; i++) {
        if (gbps)
            gbps[i] = rt->ic.bw[i];
        if (latency_us)
            latency_us[i] = rt->ic.lat_us[i];
    }
    pg__leave(rt);
    return PG_OK;
}

pg_status pg_runtime_measure_interconnect(pg_runtime *h, size_t bytes, int reps, const char *path,
                                          char *saved_as, size_t saved_cap) {
    pg__error_clear();
    if (bytes < 8 || reps < 1)
        return pg__error(PG_ERROR_ARGUMENT,
                         "pg_runtime_measure_interconnect: bytes must be >= 8 and reps >= 1 "
                         "(got %zu, %d)",
                         bytes, reps);
    pg__runtime *rt;
    if (!(rt = pg__enter_runtime(h, "pg_runtime_measure_interconnect")))
        return PG_ERROR_STATE;
    char def[1200];
    if (!path) {
        cache_path(rt, def, sizeof def);
        path = def;
    }
    /* The runtime's own work would share the links and skew the figures. */
    pg_status st = pg__exec_sync(rt);
    if (!st)
        st = measure_and_save(rt, bytes, reps, path[0] ? path : NULL);
    policy_view_update(rt);
    pg__leave(rt);
    if (!st && saved_as && saved_cap)
        snprintf(saved_as, saved_cap, "%s", path);
    return st;
}
