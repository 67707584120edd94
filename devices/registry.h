/* registry.h: the device backends by name, with what each can do. A backend (devices/host,
 * devices/cuda, devices/sim) describes itself in one pg__backend_entry, defined in its own
 * folder, and registry.c lists each entry on one line. The core opens devices through
 * pg__devices_open and asks capabilities (each device's class, whether its memory is host
 * memory) through the entries: it never names a backend nor branches on pg_device_kind.
 * IREE's driver registry is the model: factories by name; devices answer capability queries. */
#ifndef PG_REGISTRY_H
#define PG_REGISTRY_H

#include "devices/backend.h"

#include <stddef.h>

/* What opening a backend needs besides its own spec (the part after "name:"). */
typedef struct pg__open_args {
    int timing;       /* time operations (trace, profile, models) */
    int check_bounds; /* option check=bounds: guarded device buffers where the backend has them */
    const char *cache_dir;
    /* Ranks sharing this node's GPUs: a GPU-class backend opened with an empty spec keeps only
     * the GPUs `share` names for this rank (NULL or local_size <= 1: all of them). */
    int local_rank, local_size;
    void (*share)(int local_rank, int local_size, int ndev, char *buf, size_t cap);
} pg__open_args;

typedef struct pg__backend_entry {
    const char *name;  /* the devices string's prefix: "host", "cuda", "sim" */
    const char *forms; /* the forms it takes, for messages: "host:N (N CPU devices)" */
    pg_device_class device_class;
    /* 1: device memory is plain host memory, so any backend's copy reaches it as host memory
     * (how copies between devices of two backends go: through it). */
    int host_visible;
    /* 1: "auto" tries it, in table order; the first CPU-class entry is the fallback. */
    int in_auto;
    /* 1: the interconnect is worth measuring at start (GPUs); 0: defaults or links_file. */
    int measure_links;
    /* 1: asking whether an event is done costs a load, not a device query (CPU devices): core
     * asks at every placement instead of within a probe window. */
    int cheap_queries;
    /* Optional (NULL): say what device buffer p holds in the backend's fault messages (CPU
     * devices' guarded buffers, check=bounds; copied). Non-NULL also means core may stage a
     * view parameter in a guarded buffer of its own on these devices (core/bounds.c). */
    void (*label_buffer)(void *p, const char *label);
    /* Syntax of the spec ("" for the bare name), before anything is loaded; NULL: any. */
    pg_status (*check)(const char *spec);
    pg_status (*open)(const char *spec, const pg__open_args *a, const pg__backend_ops **ops,
                      pg__backend **b, int *ndev);
    /* Optional (NULL): the links the backend knows without measuring (simulated machines), as
     * an interconnect CSV file written under cache_dir; its path into out. */
    pg_status (*links_file)(pg__backend *b, const char *cache_dir, char *out, size_t cap);
    /* Optional (NULL): append a measured kernel sample to a timing profile the backend reads
     * (simulated devices' profiles, option profile). */
    pg_status (*profile_append)(const char *path, const char *kernel, const char *device,
                                pg_dim3 grid, pg_dim3 block, uint64_t arg_bytes, uint64_t ns);
} pg__backend_entry;

/* The registered backends, in table order (NULL past the end). */
const pg__backend_entry *pg__registry_at(int i);
/* The entry named by the first len characters of name; NULL if none. */
const pg__backend_entry *pg__registry_find(const char *name, size_t len);

/* Devices opened from a devices string: one backend, or several behind one ops table
 * ("cuda,host:2": devices numbered in the string's order). */
typedef struct pg__devices {
    const pg__backend_ops *ops;
    pg__backend *b;
    int ndev;
    const pg__backend_entry *entry[PG_MAX_DEVICES]; /* each device's backend */
    int nbackends;                                  /* backends behind ops */
} pg__devices;

/* Check a devices string's syntax (options): each part a registered form, or "auto". */
pg_status pg__devices_check(const char *spec);
/* Open what spec names; "auto" is the first in_auto backend that opens, else, alone, the first
 * CPU-class one with its default spec, and beside other parts ("auto,host:2") nothing. *why_auto
 * (may be NULL) gets why the in_auto ones did not open
 * ("" when they did, or were not tried), for the log. */
pg_status pg__devices_open(const char *spec, const pg__open_args *a, pg__devices *out,
                           char *why_auto, size_t why_cap);
/* "host" or "cuda:0,2" or "auto": the forms every registered backend takes, for messages. */
void pg__devices_forms(char *out, size_t cap);
/* Whether a copy can go between devices of entries x and y: same backend, or one's memory is
 * host memory. */
int pg__registry_can_copy(const pg__backend_entry *x, const pg__backend_entry *y);
/* The first registered profile writer (NULL: none). */
const pg__backend_entry *pg__registry_profile_writer(void);

/* Several backends behind one ops table (devices/mixed.c): parts[i] opened with ops[i], b[i],
 * n[i] devices, in that order. Copies between them go through host memory; CPU devices' buffers
 * are the GPU backend's pinned host memory unless check_bounds. On success takes ownership of
 * every part. */
pg_status pg__mixed_open(int nparts, const pg__backend_entry *const *entries,
                         const pg__backend_ops *const *ops, pg__backend *const *b, const int *n,
                         int check_bounds, const pg__backend_ops **out_ops, pg__backend **out_b);

#endif
