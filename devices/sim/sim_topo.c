/* sim_topo.c: the topology file of a simulated machine.
 *
 * One statement a line; words separated by blanks, "quoted" to hold blanks; '#' starts a comment
 * (sources of the figures go there). Statements:
 *
 *   name NAME                         the machine's name (log lines, the matrix file's name)
 *   host [memory_gbps=N] [dma_gbps=N] [launch_us=N] [copy_us=N] [launch_latency_us=N]
 *        [profile_us=N] [graph_us=N] [graph_node_ns=N] [graph_edge_us=N]
 *                                     host memory bandwidth (host-to-host copies; default 20);
 *                                     what all copies between host memory and GPUs move at most
 *                                     together, both directions (default: no such limit); the
 *                                     host time one kernel launch / one copy call costs (the
 *                                     driver's share, added to the virtual clock; default 0);
 *                                     the device side of a launch, from the call's return to the
 *                                     kernel's start on an idle GPU (default 2.6); what a
 *                                     recorded profile sample holds beyond the kernel's own time
 *                                     (default 5.5, subtracted from samples); the host time of
 *                                     a graph launch, fixed and per node (defaults 2.5, 1)
 *   gpu_type ID name="..." memory=BYTES cc=MAJOR.MINOR sms=N memory_gbps=N
 *            [kernel_us=N] [sm_threads=N] [max_threads=N] [max_block=X,Y,Z] [max_grid=X,Y,Z]
 *            [max_shared=BYTES]
 *                                     a kind of GPU: what pg_device_info reports, its memory
 *                                     bandwidth, the fixed time of a kernel the profile does
 *                                     not know (default 2 us) and the threads a multiprocessor
 *                                     holds (default 2048). Limits default to CUDA's usual
 *                                     (1024; 1024,1024,64; 2147483647,65535,65535; 48K).
 *   gpus COUNT ID                     COUNT more GPUs of that type: gpu0, gpu1, ... in order
 *   switch NAME...                    nodes that forward (NVSwitch, PCIe switch, CPU socket)
 *   link A B GBPS LATENCY_US [duplex=GBPS]
 *                                     a link both ways, GBPS each way (GB/s = bytes per ns);
 *                                     duplex: what both directions move at most together
 *   dlink A B GBPS LATENCY_US         a link from A to B only
 *
 * A and B are host, gpuN or a switch. Byte counts take K, M, G, T (binary) suffixes. A copy
 * between two locations takes the route with the widest narrowest link, then the fewest hops,
 * then the least latency, among paths that pass through the host and switches only (a GPU
 * forwards nothing): sim_routes.c. Every pair of locations must have a route. */
#include "devices/sim/sim_topo.h"
#include "base/alloc.h"
#include "base/error.h"
#include "devices/sim/sim_text.h"
#include "nvrtc/kernel_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILE (1u << 20)
#define MAX_WORDS 32
#define MAX_TYPES 8

typedef struct gpu_type {
    char id[32];
    pg__sim_gpu g;
} gpu_type;

typedef struct parser {
    const char *path;
    int line;
    pg__sim_topo *t;
    gpu_type types[MAX_TYPES];
    int ntypes;
    char why[300];
} parser;

#define FAIL(p, ...) (snprintf((p)->why, sizeof(p)->why, __VA_ARGS__), -1)

/* "key=value" into key and value; -1 if there is no '='. */
static int key_value(char *w, char **key, char **value) {
    char *eq = strchr(w, '=');
    if (!eq || eq == w)
        return -1;
    *eq = '\0';
    *key = w;
    *value = eq + 1;
    return 0;
}

/* Ranges that keep virtual time finite and moving: a time of more than a second per launch,
 * copy or hop, or a bandwidth under 1 MB/s, describes no machine, and values far beyond them
 * (launch_us=1e308, memory_gbps=1e-300) overflowed the clock or stalled it (a launch that never
 * returned, a kernel that never ended). */
#define MAX_US 1e6    /* one second */
#define MIN_GBPS 1e-3 /* 1 MB/s */
#define MAX_GBPS 1e6  /* 1 PB/s */

/* A bandwidth in GB/s. */
static int positive(parser *p, const char *key, const char *v, double *out) {
    if (pg__sim_number(v, out) || !(*out > 0))
        return FAIL(p, "%s=%s is not a positive number", key, v);
    if (*out < MIN_GBPS || *out > MAX_GBPS)
        return FAIL(p, "%s=%s is out of range: a bandwidth in GB/s from %g (1 MB/s) to %g", key, v,
                    MIN_GBPS, MAX_GBPS);
    return 0;
}

/* A time in microseconds (scale 1e3: in nanoseconds). */
static int time_in(parser *p, const char *key, const char *v, double scale, double *out) {
    if (pg__sim_number(v, out) || *out < 0)
        return FAIL(p, "%s=%s is not a number >= 0", key, v);
    if (*out > MAX_US * scale)
        return FAIL(p, "%s=%s is out of range: a time in %s from 0 to %g (one second)", key, v,
                    scale == 1 ? "microseconds" : "nanoseconds", MAX_US * scale);
    return 0;
}

static int non_negative(parser *p, const char *key, const char *v, double *out) {
    return time_in(p, key, v, 1, out);
}

/* A whole number from 1 to max, checked before any conversion. */
static int whole(parser *p, const char *key, const char *v, double max, double *out) {
    if (pg__sim_number(v, out) || !(*out >= 1 && *out <= max) || *out != (double)(int64_t)*out)
        return FAIL(p, "%s=%s is not a whole number from 1 to %.0f", key, v, max);
    return 0;
}

static int dim3(parser *p, const char *key, const char *v, pg_dim3 *out) {
    unsigned long x[3];
    char extra;
    if (sscanf(v, "%lu,%lu,%lu%c", &x[0], &x[1], &x[2], &extra) != 3 || !x[0] || !x[1] || !x[2] ||
        x[0] > 0xffffffffUL || x[1] > 0xffffffffUL || x[2] > 0xffffffffUL)
        return FAIL(p, "%s=%s is not three positive whole numbers X,Y,Z", key, v);
    *out = (pg_dim3){(uint32_t)x[0], (uint32_t)x[1], (uint32_t)x[2]};
    return 0;
}

static int parse_host(parser *p, char **w, int n) {
    for (int i = 1; i < n; i++) {
        char *k, *v;
        if (key_value(w[i], &k, &v))
            return FAIL(p, "'%s' is not key=value", w[i]);
        if (!strcmp(k, "memory_gbps")) {
            if (positive(p, k, v, &p->t->host_mem_gbps))
                return -1;
        } else if (!strcmp(k, "launch_us")) {
            if (non_negative(p, k, v, &p->t->launch_api_us))
                return -1;
        } else if (!strcmp(k, "copy_us")) {
            if (non_negative(p, k, v, &p->t->copy_api_us))
                return -1;
        } else if (!strcmp(k, "dma_gbps")) {
            if (positive(p, k, v, &p->t->host_dma_gbps))
                return -1;
        } else if (!strcmp(k, "launch_latency_us")) {
            if (non_negative(p, k, v, &p->t->launch_latency_us))
                return -1;
        } else if (!strcmp(k, "profile_us")) {
            if (non_negative(p, k, v, &p->t->profile_us))
                return -1;
        } else if (!strcmp(k, "graph_us")) {
            if (non_negative(p, k, v, &p->t->graph_api_us))
                return -1;
        } else if (!strcmp(k, "graph_node_ns")) {
            if (time_in(p, k, v, 1e3, &p->t->graph_node_ns))
                return -1;
        } else if (!strcmp(k, "graph_edge_us")) {
            if (non_negative(p, k, v, &p->t->graph_edge_us))
                return -1;
        } else {
            return FAIL(p,
                        "unknown host key '%s' (memory_gbps, dma_gbps, launch_us, copy_us, "
                        "launch_latency_us, profile_us, graph_us, graph_node_ns, graph_edge_us)",
                        k);
        }
    }
    return 0;
}

static int gpu_key(parser *p, pg__sim_gpu *g, char *k, char *v, unsigned *seen) {
    pg_device_info *i = &g->info;
    double x;
    uint64_t b;
    if (!strcmp(k, "name")) {
        if (!v[0] || strlen(v) >= sizeof i->name)
            return FAIL(p, "name must have 1 to %zu characters", sizeof i->name - 1);
        snprintf(i->name, sizeof i->name, "%s", v);
        *seen |= 1;
    } else if (!strcmp(k, "memory")) {
        if (pg__sim_bytes(v, &b) || !b)
            return FAIL(p, "memory=%s is not a byte count (e.g. 80G)", v);
        i->memory_bytes = b;
        *seen |= 2;
    } else if (!strcmp(k, "cc")) {
        int ma, mi;
        char extra;
        if (sscanf(v, "%d.%d%c", &ma, &mi, &extra) != 2 || ma < 1 || ma > 99 || mi < 0 || mi > 9)
            return FAIL(p, "cc=%s is not a compute capability MAJOR.MINOR (e.g. 9.0)", v);
        i->compute_major = ma;
        i->compute_minor = mi;
        *seen |= 4;
    } else if (!strcmp(k, "sms")) {
        if (whole(p, k, v, 1e5, &x))
            return -1;
        i->multiprocessors = (int)x;
        *seen |= 8;
    } else if (!strcmp(k, "memory_gbps")) {
        if (positive(p, k, v, &g->mem_gbps))
            return -1;
        *seen |= 16;
    } else if (!strcmp(k, "kernel_us")) {
        if (non_negative(p, k, v, &g->kernel_us))
            return -1;
    } else if (!strcmp(k, "sm_threads")) {
        if (whole(p, k, v, 1 << 20, &g->sm_threads))
            return -1;
    } else if (!strcmp(k, "max_threads")) {
        if (whole(p, k, v, 4294967295.0, &x))
            return -1;
        i->max_threads_per_block = (uint32_t)x;
    } else if (!strcmp(k, "max_block")) {
        return dim3(p, k, v, &i->max_block);
    } else if (!strcmp(k, "max_grid")) {
        return dim3(p, k, v, &i->max_grid);
    } else if (!strcmp(k, "max_shared")) {
        if (pg__sim_bytes(v, &b))
            return FAIL(p, "max_shared=%s is not a byte count", v);
        i->max_shared_memory_per_block = b;
    } else {
        return FAIL(p,
                    "unknown gpu_type key '%s' (name, memory, cc, sms, memory_gbps, kernel_us, "
                    "sm_threads, max_threads, max_block, max_grid, max_shared)",
                    k);
    }
    return 0;
}

static int parse_gpu_type(parser *p, char **w, int n) {
    if (n < 2)
        return FAIL(p, "gpu_type needs an ID, then key=value pairs");
    if (p->ntypes == MAX_TYPES)
        return FAIL(p, "more than %d gpu types", MAX_TYPES);
    for (int i = 0; i < p->ntypes; i++)
        if (!strcmp(p->types[i].id, w[1]))
            return FAIL(p, "gpu_type %s is defined twice", w[1]);
    if (strlen(w[1]) >= sizeof p->types[0].id)
        return FAIL(p, "gpu_type ID '%s' is too long", w[1]);
    gpu_type *ty = &p->types[p->ntypes];
    memset(ty, 0, sizeof *ty);
    snprintf(ty->id, sizeof ty->id, "%s", w[1]);
    pg__sim_gpu *g = &ty->g;
    g->info.kind = PG_DEVICE_CUDA;
    g->info.max_threads_per_block = 1024;
    g->info.max_block = (pg_dim3){1024, 1024, 64};
    g->info.max_grid = (pg_dim3){2147483647u, 65535, 65535};
    g->info.max_shared_memory_per_block = 48 << 10;
    g->kernel_us = 2.0;
    g->sm_threads = 2048;
    unsigned seen = 0;
    for (int i = 2; i < n; i++) {
        char *k, *v;
        if (key_value(w[i], &k, &v))
            return FAIL(p, "'%s' is not key=value", w[i]);
        if (gpu_key(p, g, k, v, &seen))
            return -1;
    }
    if (seen != 31)
        return FAIL(p, "gpu_type %s lacks %s", w[1],
                    !(seen & 1)   ? "name="
                    : !(seen & 2) ? "memory="
                    : !(seen & 4) ? "cc="
                    : !(seen & 8) ? "sms="
                                  : "memory_gbps=");
    p->ntypes++;
    return 0;
}

static int parse_gpus(parser *p, char **w, int n) {
    double count;
    if (n != 3 || pg__sim_number(w[1], &count) || count < 1 || count > 1e6 || count != (int)count)
        return FAIL(p, "expected: gpus COUNT TYPE (COUNT a whole number from 1 to %d)",
                    PG_MAX_DEVICES);
    const gpu_type *ty = NULL;
    for (int i = 0; i < p->ntypes; i++)
        if (!strcmp(p->types[i].id, w[2]))
            ty = &p->types[i];
    if (!ty)
        return FAIL(p, "gpu_type %s is not defined (above this line)", w[2]);
    if (p->t->ngpu + (int)count > PG_MAX_DEVICES)
        return FAIL(p, "more than %d GPUs (polygpu drives at most %d devices)", PG_MAX_DEVICES,
                    PG_MAX_DEVICES);
    for (int i = 0; i < (int)count; i++)
        p->t->gpu[p->t->ngpu++] = ty->g;
    return 0;
}

static int valid_name(const char *s) {
    if (!s[0] || strlen(s) >= 32)
        return 0;
    for (const char *c = s; *c; c++)
        if (!(*c == '-' || *c == '_' || *c == '.' || (*c >= '0' && *c <= '9') ||
              (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')))
            return 0;
    return 1;
}

/* host, gpuN or a switch: its node index, or -1. */
static int node_of(const pg__sim_topo *t, const char *s) {
    if (!strcmp(s, "host"))
        return 0;
    if (!strncmp(s, "gpu", 3) && s[3] >= '0' && s[3] <= '9') {
        char *end;
        long d = strtol(s + 3, &end, 10);
        if (!*end && d >= 0 && d < t->ngpu && !(s[3] == '0' && s[4]))
            return 1 + (int)d;
    }
    for (int i = 0; i < t->nswitch; i++)
        if (!strcmp(t->switch_name[i], s))
            return PG__SIM_FIRST_SWITCH + i;
    return -1;
}

static int parse_switch(parser *p, char **w, int n) {
    pg__sim_topo *t = p->t;
    if (n < 2)
        return FAIL(p, "switch needs at least one NAME");
    for (int i = 1; i < n; i++) {
        if (!valid_name(w[i]) || !strcmp(w[i], "host") || !strncmp(w[i], "gpu", 3))
            return FAIL(p,
                        "switch name '%s' is not valid (letters, digits, - _ . up to 31; not host "
                        "or gpu...)",
                        w[i]);
        if (node_of(t, w[i]) >= 0)
            return FAIL(p, "switch %s is declared twice", w[i]);
        if (t->nswitch == PG__SIM_MAX_SWITCHES)
            return FAIL(p, "more than %d switches", PG__SIM_MAX_SWITCHES);
        snprintf(t->switch_name[t->nswitch++], sizeof t->switch_name[0], "%s", w[i]);
    }
    return 0;
}

static int add_link(parser *p, int a, int b, double gbps, double lat, int duplex) {
    pg__sim_topo *t = p->t;
    if (t->nlinks == PG__SIM_MAX_LINKS)
        return FAIL(p, "more than %d links", PG__SIM_MAX_LINKS);
    t->link[t->nlinks++] = (pg__sim_link){a, b, gbps, lat, duplex};
    return 0;
}

static int parse_link(parser *p, char **w, int n, int both) {
    int duplex = -1;
    if (p->t->nlinks + 1 + both > PG__SIM_MAX_LINKS)
        return FAIL(p, "more than %d links", PG__SIM_MAX_LINKS);
    if (both && n == 6) {
        double x;
        if (strncmp(w[5], "duplex=", 7))
            return FAIL(p, "'%s' is not duplex=GBPS", w[5]);
        if (positive(p, "duplex", w[5] + 7, &x))
            return -1;
        duplex = p->t->nduplex;
        p->t->duplex_gbps[p->t->nduplex++] = x; /* fits: one per two links */
        n = 5;
    }
    if (n != 5)
        return FAIL(p, "expected: %s A B GBPS LATENCY_US%s", w[0], both ? " [duplex=GBPS]" : "");
    int a = node_of(p->t, w[1]), b = node_of(p->t, w[2]);
    if (a < 0 || b < 0)
        return FAIL(p, "unknown node '%s' (host, gpu0..gpu%d, or a switch declared above)",
                    a < 0 ? w[1] : w[2], p->t->ngpu - 1);
    if (a == b)
        return FAIL(p, "a link from %s to itself", w[1]);
    double gbps, lat;
    if (positive(p, "bandwidth", w[3], &gbps) || non_negative(p, "latency", w[4], &lat))
        return -1;
    if (add_link(p, a, b, gbps, lat, duplex))
        return -1;
    return both ? add_link(p, b, a, gbps, lat, duplex) : 0;
}

static int statement(parser *p, char **w, int n) {
    const char *s = w[0];
    if (!strcmp(s, "name")) {
        if (n != 2 || !valid_name(w[1]))
            return FAIL(p, "expected: name NAME (letters, digits, - _ . up to 31)");
        snprintf(p->t->name, sizeof p->t->name, "%s", w[1]);
        return 0;
    }
    if (!strcmp(s, "host"))
        return parse_host(p, w, n);
    if (!strcmp(s, "gpu_type"))
        return parse_gpu_type(p, w, n);
    if (!strcmp(s, "gpus"))
        return parse_gpus(p, w, n);
    if (!strcmp(s, "switch"))
        return parse_switch(p, w, n);
    if (!strcmp(s, "link") || !strcmp(s, "dlink"))
        return parse_link(p, w, n, s[0] == 'l');
    return FAIL(p, "unknown statement '%s' (name, host, gpu_type, gpus, switch, link, dlink)", s);
}

pg_status pg__sim_topo_load(const char *path, pg__sim_topo *t) {
    char *text;
    size_t len;
    pg_status st = pg__sim_read_file(path, "topology file", MAX_FILE, &text, &len);
    if (st)
        return st;
    memset(t, 0, sizeof *t);
    t->hash = pg__kcache_hash(text, len);
    t->host_mem_gbps = 20.0;
    t->launch_latency_us = 2.6;
    t->profile_us = 5.5;
    t->graph_api_us = 2.5;
    t->graph_node_ns = 1.0;
    parser *p = pg__calloc(1, sizeof *p);
    if (!p) {
        pg__free(text);
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory reading %s", path);
    }
    p->path = path;
    p->t = t;
    size_t at = 0;
    char *line;
    while (!st && (line = pg__sim_next_line(text, len, &at))) {
        p->line++;
        char *w[MAX_WORDS];
        const char *why = NULL;
        int n = pg__sim_words(line, w, MAX_WORDS, &why);
        if (n < 0)
            st = pg__error(PG_ERROR_ARGUMENT, "%s:%d: %s", path, p->line, why);
        else if (n > 0 && statement(p, w, n))
            st = pg__error(PG_ERROR_ARGUMENT, "%s:%d: %s", path, p->line, p->why);
    }
    pg__free(text);
    pg__free(p);
    if (st)
        return st;
    if (!t->ngpu)
        return pg__error(PG_ERROR_ARGUMENT, "%s: no GPUs (add gpu_type and gpus lines)", path);
    if (!t->name[0])
        snprintf(t->name, sizeof t->name, "sim");
    for (int d = 0; d < t->ngpu; d++) {
        pg_device_info *i = &t->gpu[d].info;
        i->id = d;
        snprintf(i->uuid, sizeof i->uuid, "SIM-%016llx-%02d", (unsigned long long)t->hash, d);
    }
    return pg__sim_routes(t, path);
}
