/* sim_topo.h: a simulated machine read from a topology file — its GPUs, the nodes and directed
 * links between them (host, GPUs, switches), and the route a copy takes between any two
 * locations. Format in sim_topo.c and devices/sim/README.md; presets in devices/sim/presets/. */
#ifndef PG_SIM_TOPO_H
#define PG_SIM_TOPO_H

#include "devices/interconnect.h"
#include "polygpu.h"

#include <stddef.h>
#include <stdint.h>

#define PG__SIM_MAX_SWITCHES 48
/* Nodes: 0 the host, 1 + d GPU d (so a node's index is its location's), then switches. */
#define PG__SIM_FIRST_SWITCH (PG_MAX_DEVICES + 1)
#define PG__SIM_MAX_NODES (PG__SIM_FIRST_SWITCH + PG__SIM_MAX_SWITCHES)
#define PG__SIM_MAX_LINKS 512
#define PG__SIM_MAX_HOPS 8

typedef struct pg__sim_gpu {
    pg_device_info info; /* as pg_runtime_devices reports it (kind PG_DEVICE_CUDA) */
    double mem_gbps;     /* device memory bandwidth: kernels, memsets, local copies */
    double kernel_us;    /* a kernel's fixed time when the profile has no entry for it */
    double sm_threads; /* threads one multiprocessor holds at once (a kernel's share of the GPU) */
} pg__sim_gpu;

typedef struct pg__sim_link {
    int from, to; /* nodes */
    double gbps;  /* GB/s, this direction (1 GB/s = 1 byte/ns) */
    double lat_us;
    int duplex; /* index in duplex_gbps of the limit both directions share, or -1 */
} pg__sim_link;

typedef struct pg__sim_route {
    int nhops;
    int link[PG__SIM_MAX_HOPS];
    double gbps;   /* the narrowest link's */
    double lat_us; /* the links' latencies added */
} pg__sim_route;

typedef struct pg__sim_topo {
    char name[64];
    uint64_t hash; /* of the file's text: names the machine (UUIDs, the matrix file) */
    int ngpu;
    pg__sim_gpu gpu[PG_MAX_DEVICES];
    int nswitch;
    char switch_name[PG__SIM_MAX_SWITCHES][32];
    int nlinks;
    pg__sim_link link[PG__SIM_MAX_LINKS];
    pg__sim_route route[PG__NLOC][PG__NLOC]; /* [src location][dst location] */
    int nduplex;
    double duplex_gbps[PG__SIM_MAX_LINKS / 2]; /* both directions of a link together */
    double host_mem_gbps;                      /* host-to-host copies */
    double host_dma_gbps; /* every copy between host memory and a GPU together; 0: no limit */
    double launch_api_us, copy_api_us; /* host time a launch / a copy call costs */
    double launch_latency_us; /* device side: a launch call's return to its kernel's start */
    double profile_us;        /* a recorded profile sample's time beyond the kernel's own */
    double graph_api_us, graph_node_ns; /* host time a graph launch costs: fixed, per node */
    double graph_edge_us; /* device side: a graph edge between nodes on two GPUs (a signal) */
} pg__sim_topo;

/* Read and check a topology file, and compute its routes. Errors name the file and line. */
pg_status pg__sim_topo_load(const char *path, pg__sim_topo *t);
/* The file of preset `name` (e.g. "dgx1-v100"): <dir>/<name>.topo in the first of PG_SIM_PRESETS,
 * the installed data folder beside the library, the build tree's copy. Unknown: the error lists
 * the presets there are. */
pg_status pg__sim_topo_find(const char *name, char *path, size_t cap);
/* Fill t->route from its links (sim_routes.c); errors name the file (path) and the pair of
 * locations without a route. */
pg_status pg__sim_routes(pg__sim_topo *t, const char *path);
/* The matrix the policies see: each pair of locations at its route's bandwidth and latency. */
void pg__sim_topo_matrix(const pg__sim_topo *t, pg__interconnect *m);
/* A node's name as the file writes it ("host", "gpu3", a switch's). */
const char *pg__sim_topo_node_name(const pg__sim_topo *t, int node, char *buf, size_t cap);

#endif
