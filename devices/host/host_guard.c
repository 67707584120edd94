/* host_guard.c: guarded device buffers for check=bounds, and naming the buffer a fault hit. */
#include "devices/host/host_guard.h"
#include "base/alloc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct guarded {
    unsigned char *base; /* the mapping: [guard][redzone][data][guard] */
    size_t len, guard;   /* guard: the bytes of each guard region */
    uintptr_t data;
    size_t bytes;
    char *label; /* what the buffer holds, for messages (owned), or NULL */
} guarded;

/* Each guard region is at least this big (and at least the buffer's own pages): a write
 * 2^20 elements of 8 bytes past either end still faults, where one guard page let it land in
 * whatever was mapped next (it once corrupted memory that crashed the process at exit).
 * Reserved address space only (PROT_NONE): it costs no memory. */
#define GUARD_MIN ((size_t)16 << 20)
/* The bytes between the first guard and the data (a page holds both) are a redzone of this
 * value, checked after each kernel (pg__host_guard_check): a small write before the start
 * lands there, not in a guard page. */
#define REDZONE 0xcb

/* Every live guarded buffer of the process, for free (which gets only the pointer) and for
 * telling which buffer a fault address is next to. A checked run is a debugging run: a linear
 * search per free is fine there. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static guarded *list;
static size_t n, cap;

/* Live buffers, read without the lock by pg__host_guard_check: none outside check=bounds. */
static _Atomic size_t live;

void *pg__host_guard_alloc(size_t bytes) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t want = bytes ? bytes : 1;
    if (want > SIZE_MAX / 4 - 2 * page)
        return NULL;
    size_t body = (want + page - 1) / page * page;
    size_t guard = body > GUARD_MIN ? body : GUARD_MIN;
    if (body > (SIZE_MAX - 2 * guard))
        guard = page;
    size_t len = body + 2 * guard;
    unsigned char *base =
        mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED && guard > page) { /* no room for big guards: one page each */
        guard = page;
        len = body + 2 * guard;
        base = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    }
    if (base == MAP_FAILED)
        return NULL;
    if (mprotect(base + guard, body, PROT_READ | PROT_WRITE) != 0) {
        munmap(base, len);
        return NULL;
    }
    /* The data end where the second guard starts: one element past the end faults. The start
     * is then aligned to the largest power of two dividing `bytes` (up to a page), which is at
     * least the element size: every element stays naturally aligned. */
    guarded g = {base, len, guard, (uintptr_t)(base + guard + body - want), want, NULL};
    memset(base + guard, REDZONE, body - want);
    pthread_mutex_lock(&mu);
    if (n == cap) {
        size_t c = cap ? 2 * cap : 64;
        guarded *l = pg__realloc(list, c * sizeof *l);
        if (!l) {
            pthread_mutex_unlock(&mu);
            munmap(base, len);
            return NULL;
        }
        list = l;
        cap = c;
    }
    list[n++] = g;
    atomic_store_explicit(&live, n, memory_order_relaxed);
    pthread_mutex_unlock(&mu);
    return (void *)g.data;
}

int pg__host_guard_free(void *p) {
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < n; i++) {
        if (list[i].data == (uintptr_t)p) {
            guarded g = list[i];
            list[i] = list[--n];
            atomic_store_explicit(&live, n, memory_order_relaxed);
            pg__free(g.label);
            if (!n) {
                pg__free(list);
                list = NULL;
                cap = 0;
            }
            pthread_mutex_unlock(&mu);
            munmap(g.base, g.len);
            return 1;
        }
    }
    pthread_mutex_unlock(&mu);
    return 0;
}

/* "a 32-byte device buffer", or what its label says it holds (with its size). */
static void what(const guarded *g, char *out, size_t outcap) {
    if (g->label)
        snprintf(out, outcap, "%s", g->label);
    else
        snprintf(out, outcap, "a %llu-byte device buffer", (unsigned long long)g->bytes);
}

int pg__host_guard_describe(uintptr_t addr, char *out, size_t cap_out) {
    int found = 0;
    char w[320];
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < n && !found; i++) {
        const guarded *g = &list[i];
        uintptr_t lo = (uintptr_t)g->base, hi = lo + g->len;
        if (addr >= lo && addr < lo + g->guard) {
            what(g, w, sizeof w);
            snprintf(out, cap_out, "out of bounds: byte offset -%llu of %s (before its start)",
                     (unsigned long long)(g->data - addr), w);
            found = 1;
        } else if (addr >= hi - g->guard && addr < hi) {
            what(g, w, sizeof w);
            snprintf(out, cap_out, "out of bounds: byte offset %llu of %s (past its end)",
                     (unsigned long long)(addr - g->data), w);
            found = 1;
        }
    }
    pthread_mutex_unlock(&mu);
    return found;
}

void pg__host_guard_label(void *p, const char *label) {
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < n; i++)
        if (list[i].data == (uintptr_t)p) {
            pg__free(list[i].label);
            list[i].label = label ? pg__strdup(label) : NULL; /* none without memory */
            break;
        }
    pthread_mutex_unlock(&mu);
}

int pg__host_guard_check(const uint64_t *params, int nparams, char *out, size_t cap_out) {
    if (!atomic_load_explicit(&live, memory_order_relaxed))
        return 0;
    int found = 0;
    char w[320];
    pthread_mutex_lock(&mu);
    for (int k = 0; k < nparams && !found; k++) {
        uintptr_t p = (uintptr_t)params[k];
        for (size_t i = 0; i < n && !found; i++) {
            const guarded *g = &list[i];
            if (p < g->data || p >= g->data + g->bytes)
                continue; /* a scalar, or another buffer */
            const unsigned char *z = g->base + g->guard;
            size_t len = (size_t)((const unsigned char *)g->data - z), at = 0;
            while (at < len && z[at] == REDZONE)
                at++;
            if (at < len) {
                what(g, w, sizeof w);
                snprintf(out, cap_out,
                         "out of bounds: a write at byte offset -%llu of %s (before its start)",
                         (unsigned long long)(len - at), w);
                found = 1;
            }
            break;
        }
    }
    pthread_mutex_unlock(&mu);
    return found;
}
