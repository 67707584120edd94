/* record.h: the most recent PG_DAG_HISTORY computations as plain records — a ring indexed by id,
 * kept after the computations themselves are freed — and the snapshot made from them (the
 * public pg_dag), which export.c writes as JSON, DOT or a Chrome trace. Plain values in and
 * out: this layer knows nothing of runtimes or computations; core tells it what happened. */
#ifndef PG_DAG_RECORD_H
#define PG_DAG_RECORD_H

#include "polygpu.h"

#define PG__RECORD_INLINE 4

typedef struct pg__record {
    uint64_t id; /* 0 = empty slot */
    pg_dag_kind kind;
    char name[64];
    int device, stream; /* PG_HOST, -1 until placed */
    int nargs;
    /* The lists point into the record's own room up to PG__RECORD_INLINE entries, else to heap
     * blocks it owns: most computations need no allocation for their record. */
    uint64_t *arg_ids;
    pg_access *arg_access;
    int nparents;
    uint64_t *parent_ids;
    uint64_t ids_in[PG__RECORD_INLINE], parents_in[PG__RECORD_INLINE];
    pg_access access_in[PG__RECORD_INLINE];
    uint64_t start_ns, end_ns; /* 0 when not timed (GPUs without the trace option) */
    uint64_t submit_ns;        /* when the script submitted it, host clock */
    uint64_t bytes;            /* copies */
    int src, dst;              /* copies: device ids or PG_HOST */
    int part, parts;           /* a part of a launch split over devices: 1..parts; 0 0 not */
} pg__record;

/* The ring: PG_DAG_HISTORY slots, NULL when out of memory. */
pg__record *pg__records_new(void);
void pg__records_free(pg__record *ring);
/* A new record of computation id in its slot (what was there is dropped), placed nowhere yet,
 * with arg_ids, arg_access and parent_ids allocated for nargs and nparents entries: the caller
 * fills them and kind, name, submit_ns and the copy fields. NULL (error set) when out of memory. */
pg__record *pg__records_add(pg__record *ring, uint64_t id, int nargs, int nparents);
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

/* A device's power and energy at one instant, for the trace's counters (core/power.c). */
typedef struct pg__dag_power {
    uint64_t t_ns; /* the runtime's clock (pg_runtime_clock) */
    int device;
    double watts;  /* GPUs: NVML's reading; others: the average since the previous sample */
    double joules; /* since the runtime started; -1 unknown */
} pg__dag_power;

/* The public snapshot: one block of memory, owned by the caller. */
struct pg_dag {
    size_t nvertices, nedges;
    pg_dag_vertex_info *vertices; /* oldest first; their args point into args */
    pg_dag_arg *args;
    uint64_t (*edges)[2]; /* [from, to] */
    int ndev;             /* the devices' tracks, for the trace */
    pg__dag_track dev[PG_MAX_DEVICES];
    size_t npower; /* power samples, oldest first (the trace's counters) */
    pg__dag_power *power;
    int rank, nranks; /* whose record it is: several ranks' traces get processes of their own */
    /* The GPU's own timeline (core/observe.c adds it to the snapshot; a block of its own, freed
     * by pg_dag_free): spans by device, then start; and "available ..." or "unavailable (why)". */
    size_t ngpu;
    pg_gpu_span *gpu;
    char gpu_timeline[1600];
};

/* Copy the records with ids up to last_id, the devices' tracks and the power samples into a
 * new snapshot. */
pg_status pg__records_snapshot(const pg__record *ring, uint64_t last_id,
                               const pg__dag_track *tracks, int ndev, const pg__dag_power *power,
                               size_t npower, pg_dag **out);

/* ---- export.c: a snapshot written out (free the text with free) */
/* The names of vertex kinds and access modes ("?" for a value out of range): what
   pg_dag_kind_name and pg_access_name return. */
const char *pg__dag_kind_str(pg_dag_kind kind);
const char *pg__access_str(pg_access access);
pg_status pg__dag_to_json(const pg_dag *dag, char **out);
pg_status pg__dag_to_dot(const pg_dag *dag, char **out);
pg_status pg__trace_to_json(const pg_dag *dag, char **out); /* Chrome trace */
/* "kernel", "copy", "memset" ("?" out of range): a GPU span's kind in the exports. */
const char *pg__gpu_kind_str(pg_gpu_span_kind kind);
/* Chrome-trace rows of the GPU's own streams: thread id PG__TRACE_GPU_TID + CUPTI's stream id,
 * past polygpu's streams (0 .. PG_DAG_COPY_STREAM). */
#define PG__TRACE_GPU_TID 1000u

#endif
