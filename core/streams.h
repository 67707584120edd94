/* streams.h: streams (core/streams.c): per device, reused least recently used; the copy stream.
 * Owns pg__stream and each device's streams[], copy_stream. */
#ifndef PG_CORE_STREAMS_H
#define PG_CORE_STREAMS_H

#include "core/objects.h"

/* ---- streams (core/streams.c) */
pg_status pg__stream_new(pg__runtime *rt, int dev, pg__stream **out);
/* dev's copy stream (prefetch: input copies go there), created on first use. */
pg_status pg__stream_copy(pg__runtime *rt, int dev, pg__stream **out);
int pg__stream_busy(pg__runtime *rt, pg__stream *s);
/* pg__stream_busy in a sweep over several streams: *now (0 at first) is the clock, read at most
 * once for the sweep. */
int pg__stream_busy_at(pg__runtime *rt, pg__stream *s, uint64_t *now);
/* The first stream of dev with no unfinished work, or NULL. */
pg__stream *pg__stream_idle(pg__runtime *rt, int dev);
/* A new stream on dev, or past PG__MAX_STREAMS the least recently used one. */
pg_status pg__stream_get_new(pg__runtime *rt, int dev, pg__stream **out);
void pg__streams_free(pg__runtime *rt);

#endif
