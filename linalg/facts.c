/* facts.c: what linalg asks of a runtime's devices that never changes while the runtime
 * lives (linalg.h, pg__linalg_facts), asked once and kept with the runtime. */
#include "linalg/linalg.h"

#include "base/alloc.h"
#include "base/error.h"

#include <stdio.h>

static const char facts_key; /* its address is the key (pg_runtime_attach) */

static pg_status ask(pg_runtime *rt, pg__linalg_facts *f) {
    pg_device_info info[1];
    pg_status st = pg_runtime_devices(rt, info, 0, &f->ndev);
    if (!st && f->ndev > PG_MAX_DEVICES)
        f->ndev = PG_MAX_DEVICES;
    if (!st)
        st = pg_runtime_cache_dir(rt, f->cache_dir, sizeof f->cache_dir);
    for (int d = 0; !st && d < f->ndev; d++)
        if (!(st = pg_runtime_model_class(rt, d, f->model_class[d], sizeof f->model_class[d])) &&
            !(st = pg_runtime_device_throughput(rt, d, &f->threads_per_s[d])))
            st = pg_runtime_device_memory(rt, d, &f->memory[d]);
    return st;
}

static void release(void *f) {
    pg__free(f);
}

pg_status pg__linalg_facts_get(pg_runtime *rt, const pg__linalg_facts **out) {
    void *kept = NULL;
    pg_status st = pg_runtime_attached(rt, &facts_key, &kept);
    if (st || kept) {
        *out = kept;
        return st;
    }
    pg__linalg_facts *f = pg__calloc(1, sizeof *f);
    if (!f)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    if ((st = ask(rt, f)) || (st = pg_runtime_attach(rt, &facts_key, f, release, &kept))) {
        char why[2048];
        snprintf(why, sizeof why, "%s", pg_last_error());
        pg__free(f);
        return pg__error_wrap(pg__error(st, "%s", why), "asking the runtime's devices");
    }
    if (kept != f) /* another thread's is kept */
        pg__free(f);
    *out = kept;
    return PG_OK;
}
