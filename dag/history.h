/* history.h: dependency inference (docs/ARCHITECTURE.md, "Dependencies from each array's
 * history"): per array, its last writer and the readers since it. A read depends on the last
 * writer; a write on the last writer and on every reader since; two readers are never ordered.
 * Computations are opaque here: this layer never looks inside one, holds no reference (the
 * caller holds one for each node it stores and gets each node back through `drop` when the
 * history lets go of it), and never decides that one is done: the caller says which readers
 * to keep. */
#ifndef PG_DAG_HISTORY_H
#define PG_DAG_HISTORY_H

#include "polygpu.h"

typedef struct pg__history {
    void *writer;   /* the last computation that wrote the array, or NULL */
    void **readers; /* computations that read it since, each once */
    int nreaders, cap;
    int prune_at; /* prune when nreaders reaches this (0: the default, 32) */
} pg__history;

/* A node the history lets go of: the caller drops its reference. */
typedef void (*pg__history_drop)(void *ctx, void *node);

/* At most how many parents a computation with these n accesses can have. */
int pg__history_parents_max(pg__history *const *h, const pg_access *access, int n);
/* The parents of a computation that accesses h[i] with access[i]: written to out (room for
 * pg__history_parents_max), each once; returns how many. */
int pg__history_parents(pg__history *const *h, const pg_access *access, int n, void **out);

/* Is a prune due before the next reader is added? (The readers list has grown to prune_at.) */
int pg__history_prune_due(const pg__history *h);
/* Keep the readers keep() says to keep, hand the others to drop; the next prune is due when
 * the list has doubled, so pruning costs O(1) per read however long finished work lingers. */
void pg__history_prune(pg__history *h, int (*keep)(void *ctx, void *node), pg__history_drop drop,
                       void *ctx);
/* Room for one more reader: the only step of a commit that can fail. */
pg_status pg__history_reserve(pg__history *h);
/* node reads the array (room reserved). */
void pg__history_add_reader(pg__history *h, void *node);
/* node writes the array: it is the last writer; the old writer and readers go to drop. */
void pg__history_set_writer(pg__history *h, void *node, pg__history_drop drop, void *ctx);
/* Forget everything (the array is freed). */
void pg__history_clear(pg__history *h, pg__history_drop drop, void *ctx);

#endif
