/* limits.c: which devices a launch's grid, block and shared memory fit, from their reported limits.
 */
#include "core/launch_limits.h"
#include "core/host_memory.h"

#include <stdio.h>
#include <string.h>

void pg__limits_init(pg__runtime *rt) {
    pg__limits *m = &rt->limits_min;
    for (int d = 0; d < rt->ndev; d++) {
        const pg_device_info *i = &rt->dev[d].info;
        pg__limits l = {i->max_threads_per_block, i->max_block, i->max_grid,
                        i->max_shared_memory_per_block};
        rt->dev[d].limits = l;
        if (d == 0) {
            *m = l;
            continue;
        }
#define MIN_INTO(f) m->f = l.f < m->f ? l.f : m->f
        MIN_INTO(threads);
        MIN_INTO(block.x);
        MIN_INTO(block.y);
        MIN_INTO(block.z);
        MIN_INTO(grid.x);
        MIN_INTO(grid.y);
        MIN_INTO(grid.z);
        MIN_INTO(shared);
#undef MIN_INTO
    }
}

/* Why `info` cannot run the launch, as a phrase after its name ("allows ..."); "" if it can. */
static void misfit(const pg_device_info *i, pg_dim3 grid, pg_dim3 block, size_t shared, char *out,
                   size_t cap) {
    uint64_t threads = (uint64_t)block.x * block.y * block.z;
    out[0] = '\0';
    if (threads > i->max_threads_per_block)
        snprintf(out, cap, "allows %u threads per block", i->max_threads_per_block);
    else if (block.x > i->max_block.x || block.y > i->max_block.y || block.z > i->max_block.z)
        snprintf(out, cap, "allows blocks up to (%u, %u, %u)", i->max_block.x, i->max_block.y,
                 i->max_block.z);
    else if (grid.x > i->max_grid.x || grid.y > i->max_grid.y || grid.z > i->max_grid.z)
        snprintf(out, cap, "allows grids up to (%u, %u, %u)", i->max_grid.x, i->max_grid.y,
                 i->max_grid.z);
    else if (shared > i->max_shared_memory_per_block) {
        char b[32];
        pg__bytes_text(i->max_shared_memory_per_block, b, sizeof b);
        snprintf(out, cap, "allows %llu bytes (%s) of shared memory per block",
                 (unsigned long long)i->max_shared_memory_per_block, b);
    }
}

static int fits(const pg__limits *l, pg_dim3 grid, pg_dim3 block, size_t shared) {
    return (uint64_t)block.x * block.y * block.z <= l->threads && block.x <= l->block.x &&
           block.y <= l->block.y && block.z <= l->block.z && grid.x <= l->grid.x &&
           grid.y <= l->grid.y && grid.z <= l->grid.z && shared <= l->shared;
}

/* Nobody fits: name the launch and the limit of each device it exceeds. Neighbours refusing it
 * for the same reason (host:16) share one entry. */
static pg_status none_fits(const pg__runtime *rt, const char *kernel, pg_dim3 grid, pg_dim3 block,
                           size_t shared) {
    char list[1400] = "", why[128], next[128];
    size_t len = 0;
    int first = 0;
    misfit(&rt->dev[0].info, grid, block, shared, next, sizeof next);
    for (int d = 0; d < rt->ndev; d++) {
        memcpy(why, next, sizeof why);
        if (d + 1 < rt->ndev) {
            misfit(&rt->dev[d + 1].info, grid, block, shared, next, sizeof next);
            if (!strcmp(next, why))
                continue;
        }
        if (len < sizeof list && first == d)
            len += (size_t)snprintf(list + len, sizeof list - len, "%sdevice %d (%s) %s",
                                    len ? "; " : "", d, rt->dev[d].info.name, why);
        else if (len < sizeof list)
            len += (size_t)snprintf(
                list + len, sizeof list - len, "%sdevices %d-%d (%s) each %s", len ? "; " : "",
                first, d, rt->dev[d].info.device_class == PG_CLASS_GPU ? "GPUs" : "CPU devices",
                why);
        first = d + 1;
    }
    return pg__error(PG_ERROR_ARGUMENT,
                     "kernel '%s': block (%u, %u, %u) of %llu threads, grid (%u, %u, %u), "
                     "shared_mem = %zu bytes: too large for every device: %s",
                     kernel, block.x, block.y, block.z,
                     (unsigned long long)block.x * block.y * block.z, grid.x, grid.y, grid.z,
                     shared, list);
}

pg_status pg__limits_fit(const pg__runtime *rt, const char *kernel, pg_dim3 grid, pg_dim3 block,
                         size_t shared, uint32_t *mask) {
    uint32_t all = (uint32_t)((UINT64_C(1) << rt->ndev) - 1);
    if (fits(&rt->limits_min, grid, block, shared)) { /* every device: the usual case */
        *mask = all;
        return PG_OK;
    }
    uint32_t m = 0;
    for (int d = 0; d < rt->ndev; d++) {
        if (fits(&rt->dev[d].limits, grid, block, shared))
            m |= 1u << d;
    }
    if (!m)
        return none_fits(rt, kernel, grid, block, shared);
    *mask = m;
    return PG_OK;
}
