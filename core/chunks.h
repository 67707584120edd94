/* chunks.h: chunked outputs (core/chunks.c): copies that start per chunk while the kernel runs.
 * Owns c->chunks. */
#ifndef PG_CORE_CHUNKS_H
#define PG_CORE_CHUNKS_H

#include "core/objects.h"

/* ---- chunked outputs (core/chunks.c) */
/* Launch c (a kernel with chunked parameters, fn on s's device) with launch_chunks: with block
 * counting and c->chunks set when a copy could use it, else without. */
pg_status pg__chunks_launch(pg__runtime *rt, pg__comp *c, pg__stream *s, void *fn);
/* Frees c->chunks (its flags on the device): once no copy can wait on them. */
void pg__chunks_free(pg__runtime *rt, pg__comp *c);
/* 1 when a copy of a from src may go chunk by chunk while its producer p still runs; then
 * *block_bytes is the bytes each of p's blocks writes, from a's first byte. */
int pg__chunks_copyable(pg__runtime *rt, const pg__comp *p, const pg__array *a, int src,
                        uint64_t *block_bytes);
/* Bytes a chunked copy of `bytes` over src -> dst moves at once (option chunk_bytes, else from
 * the link's bandwidth and latency). */
uint64_t pg__chunks_copy_bytes(pg__runtime *rt, int src, int dst, uint64_t bytes);

#endif
