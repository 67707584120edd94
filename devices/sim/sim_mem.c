/* sim_mem.c: buffers of simulated GPUs (sim_mem.h). */
#include "devices/sim/sim_mem.h"
#include "base/alloc.h"

#include <string.h>

/* As cudaMalloc aligns. */
#define ALIGN 256
/* Timing-only addresses: device d owns [(d + 1) << 42, (d + 2) << 42), 4 TiB each, far above
 * anything a GPU of today holds, and never dereferenced. */
#define REGION_SHIFT 42

static uintptr_t region_start(int dev) {
    return (uintptr_t)(dev + 1) << REGION_SHIFT;
}

static size_t rounded(size_t bytes) {
    size_t n = bytes ? bytes : 1;
    return (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
}

/* The index of the first block whose address is > v. */
static int upper(const pg__sim_mem *m, uintptr_t v) {
    int lo = 0, hi = m->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (m->b[mid].addr <= v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* First fit in dev's region: the lowest gap between its blocks that holds n bytes. */
static int virtual_address(const pg__sim_mem *m, int dev, size_t n, uintptr_t *out) {
    uintptr_t at = region_start(dev), end = region_start(dev + 1);
    for (int i = upper(m, at - 1); i < m->n && m->b[i].addr < end; i++) {
        if (m->b[i].addr - at >= n)
            break;
        uintptr_t next = m->b[i].addr + rounded(m->b[i].bytes);
        at = next > at ? next : at;
    }
    if (end - at < n)
        return -1;
    *out = at;
    return 0;
}

pg__sim_mem_result pg__sim_mem_alloc(pg__sim_mem *m, int dev, size_t bytes, void **out) {
    size_t n = rounded(bytes);
    if (n < bytes || m->used[dev] + n > m->capacity[dev] || m->used[dev] + n < m->used[dev])
        return PG__SIM_MEM_FULL;
    if (m->n == m->cap) {
        int cap = m->cap ? m->cap * 2 : 64;
        pg__sim_block *nb = pg__realloc(m->b, (size_t)cap * sizeof *nb);
        if (!nb)
            return PG__SIM_MEM_HOST_OOM;
        m->b = nb;
        m->cap = cap;
    }
    uintptr_t addr;
    if (m->real) {
        void *p = NULL;
        if (pg__posix_memalign(&p, ALIGN, n))
            return PG__SIM_MEM_HOST_OOM;
        memset(p, 0, n);
        addr = (uintptr_t)p;
    } else if (virtual_address(m, dev, n, &addr)) {
        return PG__SIM_MEM_FULL;
    }
    int at = upper(m, addr);
    memmove(&m->b[at + 1], &m->b[at], (size_t)(m->n - at) * sizeof m->b[0]);
    m->b[at] = (pg__sim_block){addr, bytes, dev};
    m->n++;
    m->used[dev] += n;
    *out = (void *)addr;
    return PG__SIM_MEM_OK;
}

void pg__sim_mem_free(pg__sim_mem *m, void *p) {
    int i = upper(m, (uintptr_t)p) - 1;
    if (i < 0 || m->b[i].addr != (uintptr_t)p)
        return;
    m->used[m->b[i].dev] -= rounded(m->b[i].bytes);
    if (m->real)
        pg__free(p);
    memmove(&m->b[i], &m->b[i + 1], (size_t)(m->n - i - 1) * sizeof m->b[0]);
    m->n--;
}

uint64_t pg__sim_mem_extent(const pg__sim_mem *m, int dev, uintptr_t v) {
    int i = upper(m, v) - 1;
    if (i < 0 || m->b[i].dev != dev || v >= m->b[i].addr + m->b[i].bytes)
        return 0;
    return m->b[i].addr + m->b[i].bytes - v;
}

void pg__sim_mem_close(pg__sim_mem *m) {
    if (m->real)
        for (int i = 0; i < m->n; i++)
            pg__free((void *)m->b[i].addr);
    pg__free(m->b);
    m->b = NULL;
    m->n = m->cap = 0;
}
