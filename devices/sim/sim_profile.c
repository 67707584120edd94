/* sim_profile.c: kernel timing profiles.
 *
 * A CSV file; '#' lines and blank lines are comments. Two kinds of line, told by the first field:
 *
 *   model,KERNEL,DEVICE,X,A_NS,B_NS
 *       duration = A_NS + B_NS * x ns, x = bytes (of the array arguments) or threads (grid x
 *       block). Written by hand, or by a fit done elsewhere.
 *   sample,KERNEL,DEVICE,GRID,BLOCK,ARG_BYTES,NS
 *       one measured run: GRID and BLOCK as XxYxZ (4096x1x1). pg__sim_profile_append writes
 *       these; the reader fits them.
 *
 * KERNEL is the name given to pg_kernel_new (a C++ name expression such as "axpy<float>" too);
 * DEVICE is a device name as pg_device_info reports it ("NVIDIA H200"), or * for any device.
 * A field holding a comma or a quote is "quoted", a quote inside doubled. Samples of one
 * (KERNEL, DEVICE) are fitted by least squares as a + b * x for x = bytes and x = threads (each
 * sample taken at the median of those with its x), and the one with the smaller squared error
 * kept (bytes on a tie; a negative slope becomes a flat mean), after the loader's offset is
 * taken off each sample (what the recording measured beyond the kernel: see
 * pg__sim_profile_load). A model line replaces the fit of the same pair
 * and is taken as written. */
#include "devices/sim/sim_profile.h"
#include "base/alloc.h"
#include "base/error.h"
#include "devices/sim/sim_text.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A sample's duration after its recording's offset is taken off, at least (the shortest kernel
 * time seen as a node of a CUDA graph chain on H200s is ~0.9 us). */
#define MIN_SAMPLE_NS 500.0

/* Recording appends forever: large, but not unbounded. */
#define MAX_FILE ((size_t)256 << 20)
#define HEADER                                                                                     \
    "# polygpu sim profile (format: devices/sim/README.md)\n"                                      \
    "# model,kernel,device,x,a_ns,b_ns        duration = a + b * x, x = bytes | threads\n"         \
    "# sample,kernel,device,grid,block,arg_bytes,ns\n"

typedef struct sample {
    double bytes, threads, ns;
} sample;

typedef struct entry {
    char *kernel, *device;
    int explicit_model; /* a model line gave it */
    pg__sim_model model;
    sample *s;
    int ns, cap;
} entry;

struct pg__sim_profile {
    entry *e;
    int n, cap;
};

void pg__sim_profile_free(pg__sim_profile *p) {
    if (!p)
        return;
    for (int i = 0; i < p->n; i++) {
        pg__free(p->e[i].kernel);
        pg__free(p->e[i].device);
        pg__free(p->e[i].s);
    }
    pg__free(p->e);
    pg__free(p);
}

int pg__sim_profile_count(const pg__sim_profile *p) {
    return p ? p->n : 0;
}

static entry *find(const pg__sim_profile *p, const char *kernel, const char *device) {
    for (int i = 0; i < p->n; i++)
        if (!strcmp(p->e[i].kernel, kernel) && !strcmp(p->e[i].device, device))
            return &p->e[i];
    return NULL;
}

static entry *find_or_add(pg__sim_profile *p, const char *kernel, const char *device) {
    entry *e = find(p, kernel, device);
    if (e)
        return e;
    if (p->n == p->cap) {
        int cap = p->cap ? p->cap * 2 : 16;
        entry *ne = pg__realloc(p->e, (size_t)cap * sizeof *ne);
        if (!ne)
            return NULL;
        p->e = ne;
        p->cap = cap;
    }
    e = &p->e[p->n];
    memset(e, 0, sizeof *e);
    e->kernel = pg__strdup(kernel);
    e->device = pg__strdup(device);
    if (!e->kernel || !e->device) {
        pg__free(e->kernel);
        pg__free(e->device);
        return NULL;
    }
    p->n++;
    return e;
}

/* "XxYxZ": the product. */
static int shape(const char *s, double *product) {
    unsigned long x, y, z;
    char extra;
    if (sscanf(s, "%lux%lux%lu%c", &x, &y, &z, &extra) != 3 || !x || !y || !z)
        return -1;
    *product = (double)x * (double)y * (double)z;
    return 0;
}

static int add_sample(entry *e, sample s) {
    if (e->ns == e->cap) {
        int cap = e->cap ? e->cap * 2 : 8;
        sample *n = pg__realloc(e->s, (size_t)cap * sizeof *n);
        if (!n)
            return -1;
        e->s = n;
        e->cap = cap;
    }
    e->s[e->ns++] = s;
    return 0;
}

static double xof(const sample *s, pg__sim_x x) {
    return x == PG__SIM_X_BYTES ? s->bytes : s->threads;
}

typedef struct point {
    double x, ns;
} point;

static int by_x_then_ns(const void *pa, const void *pb) {
    const point *a = pa, *b = pb;
    if (a->x != b->x)
        return a->x < b->x ? -1 : 1;
    return a->ns < b->ns ? -1 : a->ns > b->ns;
}

/* Least squares a + b x over the samples, each taken at the median of the samples with its x
 * (timings have a long tail — a clock ramp, an interrupt — and the median is what the kernel
 * typically takes); two passes: sizes reach 1e10, their squares would swamp the residuals. *sse:
 * the squared error over the samples themselves. p: scratch of e->ns points. */
static pg__sim_model fit(const entry *e, pg__sim_x x, point *p, double *sse) {
    int n = e->ns;
    for (int i = 0; i < n; i++)
        p[i] = (point){xof(&e->s[i], x), e->s[i].ns};
    qsort(p, (size_t)n, sizeof *p, by_x_then_ns);
    for (int i = 0; i < n;) { /* each run of equal x: its median */
        int j = i;
        while (j < n && p[j].x == p[i].x)
            j++;
        double med = (j - i) % 2 ? p[i + (j - i) / 2].ns
                                 : (p[i + (j - i) / 2 - 1].ns + p[i + (j - i) / 2].ns) / 2;
        for (int k = i; k < j; k++)
            p[k].ns = med;
        i = j;
    }
    double mx = 0, my = 0;
    for (int i = 0; i < n; i++) {
        mx += p[i].x;
        my += p[i].ns;
    }
    mx /= n;
    my /= n;
    double sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        double dx = p[i].x - mx;
        sxx += dx * dx;
        sxy += dx * (p[i].ns - my);
    }
    double b = sxx > 0 ? sxy / sxx : 0;
    if (b < 0)
        b = 0; /* longer for less work is noise: a flat mean */
    pg__sim_model m = {x, my - b * mx, b};
    *sse = 0;
    for (int i = 0; i < n; i++) {
        double r = e->s[i].ns - (m.a_ns + m.b_ns * xof(&e->s[i], x));
        *sse += r * r;
    }
    return m;
}

/* -1: out of memory. */
static int fit_entry(entry *e) {
    if (e->explicit_model || !e->ns)
        return 0;
    point *p = pg__malloc((size_t)e->ns * sizeof *p);
    if (!p)
        return -1;
    double eb, et;
    pg__sim_model mb = fit(e, PG__SIM_X_BYTES, p, &eb);
    pg__sim_model mt = fit(e, PG__SIM_X_THREADS, p, &et);
    e->model = et < eb ? mt : mb;
    pg__free(p);
    return 0;
}

/* One line's fields into p; 0, or -1 with why. */
static int parse_line(pg__sim_profile *p, char **f, int n, char *why, size_t cap) {
    if (!strcmp(f[0], "model")) {
        if (n != 6) {
            snprintf(why, cap,
                     "a model line has 6 fields (model,kernel,device,x,a_ns,b_ns), not %d", n);
            return -1;
        }
        pg__sim_model m;
        if (!strcmp(f[3], "bytes"))
            m.x = PG__SIM_X_BYTES;
        else if (!strcmp(f[3], "threads"))
            m.x = PG__SIM_X_THREADS;
        else {
            snprintf(why, cap, "x '%s' is neither bytes nor threads", f[3]);
            return -1;
        }
        /* Bounded as the topology's times are (sim_topo.c): a kernel of more than a second, or
         * slower than 1 MB/s (1 us per byte or thread), would overflow or stall virtual time. */
        if (pg__sim_number(f[4], &m.a_ns) || pg__sim_number(f[5], &m.b_ns) || m.b_ns < 0 ||
            !(m.a_ns >= -1e9 && m.a_ns <= 1e9) || m.b_ns > 1e3) {
            snprintf(why, cap,
                     "a_ns '%s' and b_ns '%s' must be numbers, a_ns from -1e9 to 1e9 (one second), "
                     "b_ns from 0 to 1000 (1 us per byte or thread)",
                     f[4], f[5]);
            return -1;
        }
        if (!f[1][0] || !f[2][0]) {
            snprintf(why, cap, "kernel and device must not be empty");
            return -1;
        }
        entry *e = find_or_add(p, f[1], f[2]);
        if (!e) {
            snprintf(why, cap, "out of host memory");
            return -1;
        }
        if (e->explicit_model) {
            snprintf(why, cap, "a second model for %s on %s", f[1], f[2]);
            return -1;
        }
        e->explicit_model = 1;
        e->model = m;
        return 0;
    }
    if (!strcmp(f[0], "sample")) {
        if (n != 7) {
            snprintf(why, cap,
                     "a sample line has 7 fields (sample,kernel,device,grid,block,arg_bytes,ns), "
                     "not %d",
                     n);
            return -1;
        }
        double grid, block;
        sample s;
        if (shape(f[3], &grid) || shape(f[4], &block)) {
            snprintf(why, cap, "grid '%s' and block '%s' must be XxYxZ (e.g. 4096x1x1)", f[3],
                     f[4]);
            return -1;
        }
        if (pg__sim_number(f[5], &s.bytes) || s.bytes < 0 || s.bytes > 1e18 ||
            pg__sim_number(f[6], &s.ns) || s.ns < 0 || s.ns > 1e9) {
            snprintf(why, cap,
                     "arg_bytes '%s' and ns '%s' must be numbers >= 0 (arg_bytes at most 1e18, ns "
                     "at most 1e9: one second)",
                     f[5], f[6]);
            return -1;
        }
        if (!f[1][0] || !f[2][0]) {
            snprintf(why, cap, "kernel and device must not be empty");
            return -1;
        }
        s.threads = grid * block;
        entry *e = find_or_add(p, f[1], f[2]);
        if (!e || add_sample(e, s)) {
            snprintf(why, cap, "out of host memory");
            return -1;
        }
        return 0;
    }
    snprintf(why, cap, "unknown line kind '%s' (model or sample)", f[0]);
    return -1;
}

pg_status pg__sim_profile_load(const char *path, double sample_offset_ns, pg__sim_profile **out) {
    char *text;
    size_t len;
    pg_status st = pg__sim_read_file(path, "sim profile", MAX_FILE, &text, &len);
    if (st)
        return st;
    pg__sim_profile *p = pg__calloc(1, sizeof *p);
    if (!p) {
        pg__free(text);
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory reading %s", path);
    }
    size_t at = 0;
    int lineno = 0;
    char *line;
    while (!st && (line = pg__sim_next_line(text, len, &at))) {
        lineno++;
        while (*line == ' ' || *line == '\t')
            line++;
        if (!line[0] || line[0] == '#')
            continue;
        char *f[8];
        const char *bad = NULL;
        char why[300];
        int n = pg__sim_csv(line, f, 8, &bad);
        if (n < 0)
            st = pg__error(PG_ERROR_ARGUMENT, "%s:%d: %s", path, lineno, bad);
        else if (parse_line(p, f, n, why, sizeof why))
            st = pg__error(!strcmp(why, "out of host memory") ? PG_ERROR_OUT_OF_MEMORY
                                                              : PG_ERROR_ARGUMENT,
                           "%s:%d: %s", path, lineno, why);
    }
    pg__free(text);
    if (st) {
        pg__sim_profile_free(p);
        return st;
    }
    /* Each sample less what the recording added beyond the kernel: never below the smaller of
     * itself and MIN_SAMPLE_NS. */
    for (int i = 0; i < p->n; i++)
        for (int j = 0; j < p->e[i].ns && sample_offset_ns > 0; j++) {
            double *ns = &p->e[i].s[j].ns, floor = *ns < MIN_SAMPLE_NS ? *ns : MIN_SAMPLE_NS;
            *ns = *ns - sample_offset_ns > floor ? *ns - sample_offset_ns : floor;
        }
    for (int i = 0; i < p->n; i++)
        if (fit_entry(&p->e[i])) {
            pg__sim_profile_free(p);
            return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory fitting %s", path);
        }
    *out = p;
    return PG_OK;
}

const pg__sim_model *pg__sim_profile_find(const pg__sim_profile *p, const char *kernel,
                                          const char *device) {
    if (!p)
        return NULL;
    const entry *e = find(p, kernel, device);
    if (!e)
        e = find(p, kernel, "*");
    return e ? &e->model : NULL;
}

double pg__sim_model_ns(const pg__sim_model *m, uint64_t arg_bytes, uint64_t threads) {
    double x = m->x == PG__SIM_X_BYTES ? (double)arg_bytes : (double)threads;
    double ns = m->a_ns + m->b_ns * x;
    return ns > 0 ? ns : 0;
}

/* s as one CSV field: quoted when it holds a comma, a quote or blanks at its ends. */
static int csv_field(char *out, size_t cap, const char *s) {
    size_t n = strlen(s);
    int quote = strpbrk(s, ",\"") || (n && (s[0] == ' ' || s[n - 1] == ' '));
    size_t len = 0;
    if (!quote)
        return snprintf(out, cap, "%s", s) >= (int)cap ? -1 : 0;
    out[len++] = '"';
    for (const char *c = s; *c; c++) {
        if (len + 3 >= cap)
            return -1;
        if (*c == '"')
            out[len++] = '"';
        out[len++] = *c;
    }
    out[len++] = '"';
    out[len] = '\0';
    return 0;
}

pg_status pg__sim_profile_append(const char *path, const char *kernel, const char *device,
                                 pg_dim3 grid, pg_dim3 block, uint64_t arg_bytes, uint64_t ns) {
    if (!path || !kernel || !device || !kernel[0] || !device[0] || strpbrk(kernel, "\r\n") ||
        strpbrk(device, "\r\n"))
        return pg__error(PG_ERROR_ARGUMENT,
                         "sim profile sample: a path, and a kernel and device name of one line "
                         "each, are needed");
    char k[600], d[300], line[1200];
    if (csv_field(k, sizeof k, kernel) || csv_field(d, sizeof d, device))
        return pg__error(PG_ERROR_ARGUMENT, "sim profile sample: kernel or device name too long");
    int n = snprintf(line, sizeof line, "sample,%s,%s,%ux%ux%u,%ux%ux%u,%llu,%llu\n", k, d, grid.x,
                     grid.y, grid.z, block.x, block.y, block.z, (unsigned long long)arg_bytes,
                     (unsigned long long)ns);
    if (n < 0 || (size_t)n >= sizeof line)
        return pg__error(PG_ERROR_ARGUMENT, "sim profile sample: line too long");
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return pg__error(PG_ERROR_IO, "cannot write sim profile %s: %s", path, strerror(errno));
    struct stat sb;
    pg_status st = PG_OK;
    if (fstat(fd, &sb) == 0 && sb.st_size == 0 &&
        write(fd, HEADER, sizeof HEADER - 1) != (ssize_t)(sizeof HEADER - 1))
        st = pg__error(PG_ERROR_IO, "writing sim profile %s failed: %s", path, strerror(errno));
    if (!st && write(fd, line, (size_t)n) != n)
        st = pg__error(PG_ERROR_IO, "writing sim profile %s failed: %s", path, strerror(errno));
    close(fd);
    return st;
}
