/* interconnect_measure.c: measure the interconnect matrix with a backend's own copy path —
 * the copies the runtime itself issues, on the stream that consumes the data — so that the
 * transfer-time policies reason with what the runtime will actually see. */
#include "devices/interconnect_measure.h"
#include "base/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

typedef struct bench {
    const pg__backend_ops *ops;
    pg__backend *b;
    int ndev;
    void *host;
    void *dev[PG_MAX_DEVICES];
    pg__bstream *s[PG_MAX_DEVICES];
} bench;

static pg_status drain(bench *m, pg__bstream *s) {
    pg__bevent *e;
    pg_status st = m->ops->event_record(m->b, s, &e);
    if (st)
        return st;
    st = m->ops->event_wait(m->b, e);
    m->ops->event_free(m->b, e);
    return st;
}

/* Location l's buffer and device (PG_HOST for the host). */
static void *buf(const bench *m, int loc) {
    return loc ? m->dev[loc - 1] : m->host;
}
static int devof(int loc) {
    return loc ? loc - 1 : PG_HOST;
}

/* One link: `reps` back-to-back copies of `bytes` after a warm-up, timed as a whole (the
 * bandwidth a stream of copies gets), and the fastest of `reps` lone 8-byte copies (the
 * latency of one copy issued and waited for). The copy runs on the stream of the device
 * that receives the data, or of the device that sends it to the host. */
static pg_status measure_link(bench *m, int src, int dst, size_t bytes, int reps, double *gbps,
                              double *lat_us) {
    pg__bstream *s = m->s[dst ? dst - 1 : src - 1];
    pg_status st =
        m->ops->copy(m->b, s, devof(dst), buf(m, dst), devof(src), buf(m, src), bytes, NULL);
    if (!st)
        st = drain(m, s);
    uint64_t t0 = now_ns();
    for (int r = 0; !st && r < reps; r++)
        st = m->ops->copy(m->b, s, devof(dst), buf(m, dst), devof(src), buf(m, src), bytes, NULL);
    if (!st)
        st = drain(m, s);
    uint64_t t1 = now_ns();
    double best = 1e30;
    for (int r = 0; !st && r < reps; r++) {
        uint64_t a = now_ns();
        st = m->ops->copy(m->b, s, devof(dst), buf(m, dst), devof(src), buf(m, src), 8, NULL);
        if (!st)
            st = drain(m, s);
        double us = (double)(now_ns() - a) / 1e3;
        best = us < best ? us : best;
    }
    if (st)
        return st;
    double sec = (double)(t1 - t0) / 1e9;
    *gbps = (double)bytes * reps / (sec > 0 ? sec : 1e-9) / 1e9;
    *lat_us = best;
    return PG_OK;
}

pg_status pg__interconnect_measure(const pg__backend_ops *ops, pg__backend *b, int ndev,
                                   size_t bytes, int reps, pg__interconnect *out) {
    if (ndev < 1 || ndev > PG_MAX_DEVICES || bytes < 8 || reps < 1)
        return pg__error(PG_ERROR_ARGUMENT,
                         "interconnect measurement: bad parameters (%d devices, %zu bytes, %d "
                         "repetitions)",
                         ndev, bytes, reps);
    bench m = {ops, b, ndev, NULL, {NULL}, {NULL}};
    pg_status st = ops->host_alloc(b, bytes, &m.host);
    for (int d = 0; !st && d < ndev; d++) {
        st = ops->stream_new(b, d, &m.s[d]);
        if (!st)
            st = ops->dev_alloc(b, d, bytes, m.s[d], &m.dev[d]);
        if (!st)
            st = ops->memset_zero(b, m.s[d], m.dev[d], bytes);
    }
    /* Buffers are stream-ordered allocations: all must exist before other streams use them. */
    for (int d = 0; !st && d < ndev; d++)
        st = drain(&m, m.s[d]);
    pg__interconnect r = *out;
    r.nloc = ndev + 1;
    for (int src = 0; !st && src <= ndev; src++)
        for (int dst = 0; !st && dst <= ndev; dst++)
            if (src != dst)
                st = measure_link(&m, src, dst, bytes, reps, &r.bw[src * r.nloc + dst],
                                  &r.lat_us[src * r.nloc + dst]);
    for (int d = 0; d < ndev; d++) {
        if (m.s[d] && drain(&m, m.s[d]) == PG_OK && m.dev[d])
            ops->dev_free(b, d, m.dev[d]);
        if (m.s[d])
            ops->stream_free(b, m.s[d]);
    }
    if (m.host)
        ops->host_free(b, m.host);
    if (!st)
        *out = r;
    return st;
}

/* FNV-1a: a stable name for a set of GPUs, not a security boundary. */
void pg__interconnect_cache_name(const pg_device_info *devs, int ndev, char *out, size_t cap) {
    uint64_t h = 1469598103934665603ull;
    for (int d = 0; d < ndev; d++)
        for (const char *p = devs[d].uuid;; p++) {
            h = (h ^ (unsigned char)*p) * 1099511628211ull;
            if (!*p)
                break;
        }
    snprintf(out, cap, "interconnect-%d-%016llx.csv", ndev, (unsigned long long)h);
}
