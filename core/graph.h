/* graph.h: recordings (core/graph.c): pg_graph_begin .. pg_graph_end, replays. Owns pg__graph,
 * rt->graphs, rt->rec. */
#ifndef PG_CORE_GRAPH_H
#define PG_CORE_GRAPH_H

#include "core/objects.h"

/* ---- recordings (core/graph.c) */
/* Whether c (kernel launch, bound, references taken) is taken by rt's recording: then *st is
 * PG_OK and the recording owns c's reference, or an error (another thread records). 0: not
 * recording, launch c now. */
int pg__graph_take(pg__runtime *rt, pg__comp *c, pg_status *st);
/* PG_OK unless the calling thread is recording on rt (host access `fn` refused), or on another
 * runtime (any call refused); `a` (may be NULL) is the array the call is about. */
pg_status pg__graph_refuse(pg__runtime *rt, const char *fn, const pg__array *a);
/* Whether rt's recording in progress uses a (pg_array_free refuses then). */
int pg__graph_uses(const pg__runtime *rt, const pg__array *a);
/* pg_runtime_free: frees rt's graphs and any recording in progress (rt->mu held). */
void pg__graph_free_all(pg__runtime *rt);
/* An abandoned close: the graphs' handles stop working, their memory goes with the process. */
void pg__graph_forget_handles(pg__runtime *rt);

#endif
