/* host_fibers.c: fiber stacks and control memory for block-level kernels, one mapping per worker
 * thread, made at its first such launch, grown on demand, unmapped when the thread exits. */
#include "devices/host/host_fibers.h"
#include "base/alloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* A thread's mapping: [extra][guard|stack 0][guard|stack 1]... The stride is the stack plus a
 * page, so consecutive stacks do not start 64 KiB apart (same cache and TLB sets). */
typedef struct region {
    unsigned char *base;
    size_t len, extra, stride;
    uint32_t nstacks;
} region;

static pthread_key_t key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int key_ok;

static void release(void *p) {
    region *r = p;
    if (r->base)
        munmap(r->base, r->len);
    pg__free(r);
}

static void make_key(void) {
    key_ok = pthread_key_create(&key, release) == 0;
}

static size_t round_up(size_t v, size_t a) {
    return (v + a - 1) / a * a;
}

static int map(region *r, uint32_t nstacks, size_t extra) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t stride = round_up(PG__HOST_STACK_BYTES, page) + page;
    extra = round_up(extra ? extra : 1, page);
    if (nstacks > (SIZE_MAX - extra) / stride)
        return -1;
    size_t len = extra + (size_t)nstacks * stride;
    void *p =
        mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    if (r->base)
        munmap(r->base, r->len);
    r->base = p;
    r->len = len;
    r->extra = extra;
    r->stride = stride;
    r->nstacks = nstacks;
    /* Guard pages make a stack overflow a fault rather than another thread's corrupted frames.
     * Each splits the mapping, and a process has a limited number of mappings: without room
     * for more, the remaining stacks go unguarded. */
    for (uint32_t i = 0; i < nstacks; i++)
        if (mprotect(r->base + extra + (size_t)i * stride, page, PROT_NONE) != 0)
            break;
    return 0;
}

int pg__host_fiber_memory(uint32_t nstacks, size_t extra_bytes, pg__cpu_fibers *out) {
    pthread_once(&key_once, make_key);
    region *r = key_ok ? pthread_getspecific(key) : NULL;
    if (!r) {
        /* Without a key (never seen in practice) the memory would outlive the thread. */
        if (!key_ok || !(r = pg__calloc(1, sizeof *r)))
            return -1;
        if (pthread_setspecific(key, r) != 0) {
            pg__free(r);
            return -1;
        }
    }
    if (!r->base || nstacks > r->nstacks || extra_bytes > r->extra) {
        uint32_t ns = nstacks > r->nstacks ? nstacks : r->nstacks;
        size_t ex = extra_bytes > r->extra ? extra_bytes : r->extra;
        if (map(r, ns, ex) != 0)
            return -1;
    }
    out->extra = r->base;
    out->stacks = r->base + r->extra;
    out->stride = r->stride;
    out->stack_bytes = r->stride - (size_t)sysconf(_SC_PAGESIZE);
    return 0;
}

int pg__host_fiber_guard(uintptr_t addr) {
    region *r = key_ok ? pthread_getspecific(key) : NULL;
    if (!r || !r->base)
        return 0;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t first = (uintptr_t)(r->base + r->extra), end = (uintptr_t)(r->base + r->len);
    return addr >= first && addr < end && (addr - first) % r->stride < page;
}
