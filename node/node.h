/* node.h: several processes of one user share a node (issue 39). No daemon: the shared state
 * is one file in a per-user folder (0700, owner checked), mapped into every client, guarded by
 * a robust process-shared mutex (a holder that dies hands EOWNERDEAD to the next locker, who
 * repairs). Each client (a runtime) has a slot: pid and start time (against pid reuse), its
 * language, and per node device its work in flight, estimated backlog and bytes held. A
 * client publishes into its own slot with relaxed atomic stores and no lock (the launch
 * path); others read the slots without the lock. The lock is taken only to join, leave,
 * admit an allocation, wait for memory and report status; at each, dead clients (kill -9) are
 * found (kill(pid, 0) and the start time) and their slots reclaimed, as every 200 ms by a
 * client reading the others' load. This layer knows nothing of runtimes or DAGs: devices are
 * indices into the node's table of device keys ("host:0", a GPU's UUID). */
#ifndef PG_NODE_H
#define PG_NODE_H

#include "core/polygpu.h"

#include <stdatomic.h>
#include <stdint.h>

#define PG__NODE_DEVS 64
#define PG__NODE_CLIENTS 64

typedef struct pg__node_slot {
    _Atomic uint32_t used; /* 0: free; 1: a client (written under the lock) */
    int32_t pid;
    uint64_t start;   /* the process's start time (clock ticks since boot, /proc/PID/stat) */
    uint64_t ticket;  /* waiting for memory since this ticket (FCFS); 0: not waiting */
    int32_t wait_dev; /* the node device it waits on */
    int32_t ndev;
    int16_t devs[PG_MAX_DEVICES]; /* the node devices this client uses, by its device index */
    char language[16];
    _Atomic uint64_t inflight[PG__NODE_DEVS];   /* its unfinished computations there */
    _Atomic uint64_t backlog_ns[PG__NODE_DEVS]; /* their estimated durations */
    _Atomic uint64_t bytes[PG__NODE_DEVS];      /* device memory it holds (or is admitted to) */
} pg__node_slot;

typedef struct pg__node {
    struct pg__node_seg *seg;
    pg__node_slot *me;
    int ndev;
    int16_t nd[PG_MAX_DEVICES]; /* local device -> node device */
} pg__node;

/* The per-user folder: $PG_NODE_DIR (else /dev/shm, else /tmp) / polygpu-<euid>. */
pg_status pg__node_dir(char *out, size_t size);

/* Join the node as a client using ndev devices named keys[0..ndev-1]. */
pg_status pg__node_join(const char *language, int ndev, const char *const *keys, pg__node **out);
void pg__node_leave(pg__node *n);

/* Is anyone else there? One relaxed load (the launch path asks). */
int pg__node_alone(const pg__node *n);

static inline void pg__node_publish_load(pg__node *n, int dev, uint64_t inflight,
                                         uint64_t backlog_ns) {
    int nd = n->nd[dev];
    atomic_store_explicit(&n->me->inflight[nd], inflight, memory_order_relaxed);
    atomic_store_explicit(&n->me->backlog_ns[nd], backlog_ns, memory_order_relaxed);
}

static inline void pg__node_publish_bytes(pg__node *n, int dev, uint64_t bytes) {
    atomic_store_explicit(&n->me->bytes[n->nd[dev]], bytes, memory_order_relaxed);
}

/* The other clients' load on each of this client's devices (no lock; dead clients are reaped
 * at most every 200 ms on the way). clients[d]: how many others have work in flight there. */
void pg__node_others(pg__node *n, uint64_t *inflight, uint64_t *backlog_ns, int *clients);

/* The bytes the other clients hold on each of this client's devices (no lock). */
void pg__node_others_bytes(pg__node *n, uint64_t *bytes);

/* Admission of `need` more bytes on dev under a capacity of cap bytes, for a client that will
 * hold `own` bytes there besides. Under the lock: 1 when own + need fit beside the bytes the
 * others hold (then own + need is published at once, so two processes admitted together do
 * not both count the same room); 0 when not, with *others what the others hold; -1 when
 * another client waits for memory there (first come, first served: wait in line). */
int pg__node_admit(pg__node *n, int dev, uint64_t cap, uint64_t own, uint64_t need,
                   uint64_t *others);

/* One try of a wait for room (first come, first served across processes): takes a ticket the
 * first time. *done = 1 when the call's `total` bytes fit beside the others' and no earlier
 * ticket waits; then the ticket is given back. PG_ERROR_OUT_OF_MEMORY when every other client
 * holding memory there is waiting too (nobody would free any). */
pg_status pg__node_wait_try(pg__node *n, int dev, uint64_t cap, uint64_t total, int *done);
void pg__node_wait_cancel(pg__node *n);

/* For tests of a holder's death: take the node's lock and keep it (the caller is killed). */
pg_status pg__node_test_hold_lock(pg__node *n);

/* The node's state as JSON (pg_node_status): {"clients": [{"pid", "language", "devices",
 * "inflight", "bytes"}], "devices": [{"device", "inflight", "bytes", "clients"}]}. Reads the
 * state without joining; no node yet is an empty one. */
pg_status pg__node_status_json(char **out);

#endif
