/* record.h: the most recent PG_DAG_HISTORY computations as plain records — a ring indexed by id,
 * kept after the computations themselves are freed — and the snapshot made from them (the
 * public pg_dag), which export.c writes as JSON, DOT or a Chrome trace. Plain values in and
 * out: this layer knows nothing of runtimes or computations; core tells it what happened. */
#ifndef PG_DAG_RECORD_H
#define PG_DAG_RECORD_H

#include "polygpu.h"

typedef struct pg__record {
    uint64_t id; /* 0 = empty slot */
    pg_dag_kind kind;
    char name[64];
    int device, stream; /* PG_HOST, -1 until placed */
    int nargs;
    uint64_t *arg_ids;
    pg_access *arg_access;
    int nparents;
    uint64_t *parent_ids;
    uint64_t start_ns, end_ns; /* 0 when not timed (GPUs without the trace option) */
    uint64_t submit_ns;        /* when the script submitted it, host clock */
    uint64_t bytes;            /* copies */
    int src, dst;              /* copies: device ids or PG_HOST */
} pg__record;

/* One computation as core describes it when it is accepted (arrays copied). */
typedef struct pg__record_new {
    uint64_t id;
    pg_dag_kind kind;
    const char *name;
    uint64_t submit_ns;
    int nargs;
    const uint64_t *arg_ids;
    const pg_access *arg_access;
    int nparents;
    const uint64_t *parent_ids;
    uint64_t bytes; /* copies: bytes, source and destination (device ids or PG_HOST) */
    int src, dst;
} pg__record_new;

/* The ring: PG_DAG_HISTORY slots, NULL when out of memory. */
pg__record *pg__records_new(void);
void pg__records_free(pg__record *ring);
pg_status pg__records_add(pg__record *ring, const pg__record_new *n);
/* Updates of a computation still in the ring (no-ops once it was overwritten). */
void pg__records_place(pg__record *ring, uint64_t id, int device, int stream);
/* An edge found while scheduling; PG_ERROR_OUT_OF_MEMORY when it cannot be kept (the caller
 * fails rather than export a DAG without it). */
pg_status pg__records_add_parent(pg__record *ring, uint64_t id, uint64_t parent);
/* The computation will not run after all: the DAG does not show it. */
void pg__records_drop(pg__record *ring, uint64_t id);
void pg__records_timing(pg__record *ring, uint64_t id, uint64_t start_ns, uint64_t end_ns);

/* A device as the trace shows it. */
typedef struct pg__dag_track {
    char name[128];  /* the device's name */
    int nstreams;    /* compute streams made so far */
    int copy_stream; /* it has a copy stream (PG_DAG_COPY_STREAM) */
} pg__dag_track;

/* The public snapshot: one block of memory, owned by the caller. */
struct pg_dag {
    size_t nvertices, nedges;
    pg_dag_vertex_info *vertices; /* oldest first; their args point into args */
    pg_dag_arg *args;
    uint64_t (*edges)[2]; /* [from, to] */
    int ndev;             /* the devices' tracks, for the trace */
    pg__dag_track dev[PG_MAX_DEVICES];
};

/* Copy the records with ids up to last_id, and the devices' tracks, into a new snapshot. */
pg_status pg__records_snapshot(const pg__record *ring, uint64_t last_id,
                               const pg__dag_track *tracks, int ndev, pg_dag **out);

/* ---- export.c: a snapshot written out (free the text with free) */
pg_status pg__dag_to_json(const pg_dag *dag, char **out);
pg_status pg__dag_to_dot(const pg_dag *dag, char **out);
pg_status pg__trace_to_json(const pg_dag *dag, char **out); /* Chrome trace */

#endif
