/* streams.c: the streams of each device — creation, reuse past the cap, busy checks. */
#include "core/streams.h"
#include "core/comp.h"
#include "core/util.h"
#include "devices/registry.h"

#include <stdlib.h>

static pg_status create(pg__runtime *rt, int dev, int index, int copy, pg__stream **out) {
    pg__stream *s = pg__calloc(1, sizeof *s);
    if (!s)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    pg_status st = rt->ops->stream_new(rt->b, dev, &s->b);
    if (st) {
        pg__free(s);
        return st;
    }
    s->device = dev;
    s->index = index;
    s->copy = copy;
    *out = s;
    return PG_OK;
}

pg_status pg__stream_new(pg__runtime *rt, int dev, pg__stream **out) {
    pg__device *d = &rt->dev[dev];
    if (d->nstreams == PG__MAX_STREAMS)
        return pg__error(PG_ERROR_INTERNAL, "device %d already has %d streams", dev,
                         PG__MAX_STREAMS);
    pg_status st = create(rt, dev, d->nstreams, 0, out);
    if (!st)
        d->streams[d->nstreams++] = *out;
    return st;
}

pg_status pg__stream_copy(pg__runtime *rt, int dev, pg__stream **out) {
    pg__device *d = &rt->dev[dev];
    pg_status st = d->copy_stream ? PG_OK : create(rt, dev, 0, 1, &d->copy_stream);
    *out = d->copy_stream;
    return st;
}

pg_status pg__stream_get_new(pg__runtime *rt, int dev, pg__stream **out) {
    pg__device *d = &rt->dev[dev];
    if (d->nstreams < PG__MAX_STREAMS)
        return pg__stream_new(rt, dev, out);
    pg__stream *lru = d->streams[0];
    for (int i = 1; i < d->nstreams; i++)
        if (d->streams[i]->last_use < lru->last_use)
            lru = d->streams[i];
    *out = lru;
    return PG_OK;
}

/* How long a stream seen busy stays "busy" without asking again: policies ask about every
 * stream of every device at each launch, and each question to a GPU costs ~1.4 us (H100,
 * cuEventQuery), more than the rest of the submit path. A stream that finished within this
 * window counts as busy: a heuristic's input, never a correctness one. On CPU devices the
 * question is a load of a counter, cheaper than reading the clock: they are always asked (the
 * window made finished streams look busy, so the stream policy opened new ones, up to 32 per
 * device, and every launch then read the clock for each). */
#define BUSY_PROBE_NS 100000u

int pg__stream_busy_at(pg__runtime *rt, pg__stream *s, uint64_t *now) {
    if (!s->last)
        return 0;
    if (pg__comp_known_done(s->last) || rt->dev[s->device].entry->cheap_queries)
        return !pg__comp_done(rt, s->last); /* finishes it without a query, or asks cheaply */
    /* The backend's clock where it has one: on simulated devices the window is virtual time,
     * else the simulator's own speed would decide which streams look busy (and so placement).
     * Read once per sweep over the streams (*now = 0: not yet): a launch over two GPUs with
     * 32 streams each read it 64 times. */
    if (!*now)
        *now = rt->ops->clock_ns ? rt->ops->clock_ns(rt->b) : pg__now_ns();
    if (*now - s->probed_ns < BUSY_PROBE_NS)
        return 1;
    s->probed_ns = *now;
    return !pg__comp_done(rt, s->last);
}

int pg__stream_busy(pg__runtime *rt, pg__stream *s) {
    uint64_t now = 0;
    return pg__stream_busy_at(rt, s, &now);
}

pg__stream *pg__stream_idle(pg__runtime *rt, int dev) {
    pg__device *d = &rt->dev[dev];
    uint64_t now = 0;
    for (int i = 0; i < d->nstreams; i++)
        if (!pg__stream_busy_at(rt, d->streams[i], &now))
            return d->streams[i];
    return NULL;
}

static void stream_free(pg__runtime *rt, pg__stream *s) {
    if (!s)
        return;
    pg__comp_set(rt, &s->last, NULL);
    rt->ops->stream_free(rt->b, s->b);
    pg__free(s);
}

void pg__streams_free(pg__runtime *rt) {
    for (int d = 0; d < rt->ndev; d++) {
        for (int i = 0; i < rt->dev[d].nstreams; i++)
            stream_free(rt, rt->dev[d].streams[i]);
        rt->dev[d].nstreams = 0;
        stream_free(rt, rt->dev[d].copy_stream);
        rt->dev[d].copy_stream = NULL;
    }
}
