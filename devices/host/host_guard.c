/* host_guard.c: guarded device buffers for check=bounds, and naming the buffer a fault hit. */
#include "devices/host/host_guard.h"
#include "base/alloc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct guarded {
    unsigned char *base; /* the mapping: [guard][... data][guard] */
    size_t len;
    uintptr_t data;
    size_t bytes;
} guarded;

/* Every live guarded buffer of the process, for free (which gets only the pointer) and for
 * telling which buffer a fault address is next to. A checked run is a debugging run: a linear
 * search per free is fine there. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static guarded *list;
static size_t n, cap;

void *pg__host_guard_alloc(size_t bytes) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t want = bytes ? bytes : 1;
    if (want > SIZE_MAX - 3 * page)
        return NULL;
    size_t body = (want + page - 1) / page * page;
    size_t len = body + 2 * page;
    unsigned char *base = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        return NULL;
    if (mprotect(base + page, body, PROT_READ | PROT_WRITE) != 0) {
        munmap(base, len);
        return NULL;
    }
    /* The data end where the second guard starts: one element past the end faults. The start
     * is then aligned to the largest power of two dividing `bytes` (up to a page), which is at
     * least the element size: every element stays naturally aligned. */
    guarded g = {base, len, (uintptr_t)(base + page + body - want), want};
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
    pthread_mutex_unlock(&mu);
    return (void *)g.data;
}

int pg__host_guard_free(void *p) {
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < n; i++) {
        if (list[i].data == (uintptr_t)p) {
            guarded g = list[i];
            list[i] = list[--n];
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

int pg__host_guard_describe(uintptr_t addr, char *out, size_t cap_out) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    int found = 0;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < n && !found; i++) {
        const guarded *g = &list[i];
        uintptr_t lo = (uintptr_t)g->base, hi = lo + g->len;
        if (addr >= lo && addr < lo + page) {
            snprintf(out, cap_out,
                     "out of bounds: byte offset -%llu of a %llu-byte device buffer (before "
                     "its start)",
                     (unsigned long long)(g->data - addr), (unsigned long long)g->bytes);
            found = 1;
        } else if (addr >= hi - page && addr < hi) {
            snprintf(out, cap_out,
                     "out of bounds: byte offset %llu of a %llu-byte device buffer (past its "
                     "end)",
                     (unsigned long long)(addr - g->data), (unsigned long long)g->bytes);
            found = 1;
        }
    }
    pthread_mutex_unlock(&mu);
    return found;
}
