/* models.c: performance models (option models): per kernel (tasks too, by name), device class
 * (the device's name) and size bucket (the bytes of its array arguments rounded down to a power
 * of two), a robust estimate of its duration — the median of the last PG__MODEL_KEEP measured
 * samples, where the first sample of each bucket in a process is dropped (warm-up: compiling,
 * first touch) and a sample over 10x the median is not kept (a spike; three in a row, though,
 * mean the kernel changed: the old samples go). A CPU device's class is "CPU device (N threads)"
 * (its name without its index). Models are loaded from
 * <cache_dir>/models/<device class>.csv at runtime creation and written back (atomically) at
 * pg_runtime_free. The min-finish-time policy reads the predictions through the view
 * (core/place.c). Lock held, except where said. */
#include "core/models.h"
#include "core/comp.h"
#include "core/handle.h"
#include "core/util.h"

#include "base/alloc.h"
#include "nvrtc/kernel_cache.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SPIKE = 10, SPIKES_TO_RESET = 3, CALIBRATED = 3 };

struct pg__model {
    char kernel[64];
    int cls; /* index into rt->model_class */
    uint64_t bucket;
    uint64_t ns[PG__MODEL_KEEP]; /* a ring of the kept samples */
    int n, head;
    int warm;   /* a sample of this process came (the first is dropped) */
    int spikes; /* consecutive rejected samples */
    uint64_t median;
    unsigned skipped; /* launches since the model was full (pg__models_want_timing) */
};

uint64_t pg__model_bucket(uint64_t bytes) {
    return bytes ? (uint64_t)1 << (63 - __builtin_clzll(bytes)) : 0;
}

static uint64_t hash(const char *kernel, int cls, uint64_t bucket) {
    uint64_t h = 1469598103934665603ull;
    for (const char *p = kernel; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    h = (h ^ (uint64_t)cls) * 1099511628211ull;
    h = (h ^ bucket) * 1099511628211ull;
    return h ^ (h >> 29);
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void update_median(pg__model *m) {
    uint64_t s[PG__MODEL_KEEP];
    memcpy(s, m->ns, (size_t)m->n * sizeof *s);
    qsort(s, (size_t)m->n, sizeof *s, cmp_u64);
    m->median = !m->n ? 0 : m->n % 2 ? s[m->n / 2] : (s[m->n / 2 - 1] + s[m->n / 2]) / 2;
}

static void keep(pg__model *m, uint64_t ns) {
    if (m->n < PG__MODEL_KEEP) {
        m->ns[(m->head + m->n) % PG__MODEL_KEEP] = ns;
        m->n++;
    } else {
        m->ns[m->head] = ns;
        m->head = (m->head + 1) % PG__MODEL_KEEP;
    }
    update_median(m);
}

static int class_of(pg__runtime *rt, const char *name, int add) {
    for (int i = 0; i < rt->nmodel_class; i++)
        if (!strcmp(rt->model_class[i], name))
            return i;
    if (!add || rt->nmodel_class == PG__MODEL_CLASSES)
        return -1;
    snprintf(rt->model_class[rt->nmodel_class], sizeof rt->model_class[0], "%s", name);
    return rt->nmodel_class++;
}

static pg__model *find(pg__runtime *rt, const char *kernel, int cls, uint64_t bucket) {
    if (!rt->model_index_cap)
        return NULL;
    size_t mask = rt->model_index_cap - 1;
    for (size_t i = hash(kernel, cls, bucket) & mask;; i = (i + 1) & mask) {
        int e = rt->model_index[i];
        if (e < 0)
            return NULL;
        pg__model *m = &rt->models[e];
        if (m->cls == cls && m->bucket == bucket && !strcmp(m->kernel, kernel))
            return m;
    }
}

static void index_put(pg__runtime *rt, int e) {
    size_t mask = rt->model_index_cap - 1;
    const pg__model *m = &rt->models[e];
    size_t i = hash(m->kernel, m->cls, m->bucket) & mask;
    while (rt->model_index[i] >= 0)
        i = (i + 1) & mask;
    rt->model_index[i] = e;
}

static pg__model *add(pg__runtime *rt, const char *kernel, int cls, uint64_t bucket) {
    if (strlen(kernel) >= sizeof rt->models[0].kernel)
        return NULL; /* not kept: a shortened name could stand for another kernel */
    if (rt->nmodels == rt->capmodels) {
        int cap = rt->capmodels ? 2 * rt->capmodels : 64;
        pg__model *n = pg__realloc(rt->models, (size_t)cap * sizeof *n);
        if (!n)
            return NULL;
        rt->models = n;
        rt->capmodels = cap;
    }
    if ((size_t)(rt->nmodels + 1) * 2 > rt->model_index_cap) {
        size_t cap = rt->model_index_cap ? 2 * rt->model_index_cap : 256;
        int *ix = pg__malloc(cap * sizeof *ix);
        if (!ix)
            return NULL;
        for (size_t i = 0; i < cap; i++)
            ix[i] = -1;
        pg__free(rt->model_index);
        rt->model_index = ix;
        rt->model_index_cap = cap;
        for (int e = 0; e < rt->nmodels; e++)
            index_put(rt, e);
    }
    pg__model *m = &rt->models[rt->nmodels];
    memset(m, 0, sizeof *m);
    snprintf(m->kernel, sizeof m->kernel, "%s", kernel);
    m->cls = cls;
    m->bucket = bucket;
    index_put(rt, rt->nmodels++);
    return m;
}

void pg__models_sample(pg__runtime *rt, const char *kernel, int dev, uint64_t bytes, uint64_t ns) {
    if (!rt->opt.models || dev < 0 || dev >= rt->ndev || !kernel)
        return;
    int cls = rt->dev_model_class[dev];
    uint64_t bucket = pg__model_bucket(bytes);
    pg__model *m = find(rt, kernel, cls, bucket);
    if (!m && !(m = add(rt, kernel, cls, bucket)))
        return; /* a sample fewer: a model is a measurement, not the program's state */
    if (!m->warm) {
        m->warm = 1;
        return;
    }
    if (m->n && ns > SPIKE * m->median) {
        if (++m->spikes < SPIKES_TO_RESET)
            return;
        m->n = m->head = 0; /* not spikes: the kernel's time changed */
    }
    m->spikes = 0;
    keep(m, ns);
}

uint64_t pg__models_args_bytes(const pg__comp *c) {
    uint64_t b = 0;
    for (int i = 0; i < c->nargs; i++)
        b += c->args[i].array->nbytes;
    return b;
}

void pg__models_note(pg__runtime *rt, const pg__comp *c) {
    if (!rt->opt.models || c->kind != PG__KERNEL || !c->kernel || c->err ||
        c->timing.end_ns <= c->timing.start_ns) /* a failed run's time says nothing */
        return;
    pg__models_sample(rt, c->kernel->name, c->device, pg__models_args_bytes(c),
                      c->timing.end_ns - c->timing.start_ns);
}

/* Once a model holds its PG__MODEL_KEEP samples, one launch in 16 is timed: on GPUs a timed
 * launch costs two events, which made min-finish-time 3-6% slower than minmax-transfer-time on
 * 2 x H200 when every launch was timed; a kernel whose time changes is still seen within
 * 16 x SPIKES_TO_RESET launches. */
int pg__models_want_timing(pg__runtime *rt, const pg__comp *c, int dev) {
    pg__model *m = find(rt, c->kernel->name, rt->dev_model_class[dev],
                        pg__model_bucket(pg__models_args_bytes(c)));
    if (!m || m->n < PG__MODEL_KEEP)
        return 1;
    return (++m->skipped & 15) == 0;
}

int64_t pg__models_predict(pg__runtime *rt, const char *kernel, int dev, uint64_t bytes) {
    if (!rt->opt.models || dev < 0 || dev >= rt->ndev || !kernel)
        return -1;
    const pg__model *m = find(rt, kernel, rt->dev_model_class[dev], pg__model_bucket(bytes));
    return m && m->n >= CALIBRATED ? (int64_t)m->median : -1;
}

/* The cold estimate, before any measurement: a launch costs COLD_LAUNCH_NS, and its threads run
 * at the device's throughput class, known at start-up — a GPU retires about one simple thread
 * per SM per clock cycle, a CPU device about one per COLD_CPU_THREAD_NS per worker thread (the
 * host backend runs a CUDA thread as an iteration of a loop). A task (a library call) has no
 * grid worth counting: one thread per 4 bytes of its arrays stands for it. Only the order of
 * magnitude matters: the estimate weighs a device's queue against the copies a call would need
 * elsewhere, and a queue of calls of one kernel is compared with itself. */
#define COLD_LAUNCH_NS 5000.0
#define COLD_CPU_THREAD_NS 4.0
#define COLD_GPU_CLOCK_HZ 1.5e9 /* when the driver gives no clock */

static double threads_per_s(const pg_device_info *in) {
    double units = in->multiprocessors > 0 ? in->multiprocessors : 1;
    if (in->device_class == PG_CLASS_GPU)
        return units * (in->clock_khz ? in->clock_khz * 1e3 : COLD_GPU_CLOCK_HZ);
    return units * 1e9 / COLD_CPU_THREAD_NS;
}

double pg__models_cold_rate(const pg__runtime *rt, int dev) {
    return dev >= 0 && dev < rt->ndev ? threads_per_s(&rt->dev[dev].info) : 0;
}

uint64_t pg__models_estimate_ns(pg__runtime *rt, const pg__comp *c, int dev) {
    if (c->kind != PG__KERNEL || !c->kernel || dev < 0 || dev >= rt->ndev)
        return 1;
    uint64_t bytes = pg__models_args_bytes(c);
    int64_t p = pg__models_predict(rt, c->kernel->name, dev, bytes);
    if (p > 0)
        return (uint64_t)p;
    double threads = c->kernel->is_task ? (double)bytes / 4
                                        : (double)c->grid.x * c->grid.y * c->grid.z * c->block.x *
                                              c->block.y * c->block.z;
    return (uint64_t)(COLD_LAUNCH_NS + threads / threads_per_s(&rt->dev[dev].info) * 1e9);
}

void pg__models_queue_add(pg__runtime *rt, pg__comp *c, int dev) {
    if (c->kind != PG__KERNEL || !c->kernel)
        return;
    c->est_ns = pg__models_estimate_ns(rt, c, dev);
    rt->dev[dev].backlog_ns += c->est_ns;
    if (rt->opt.models) {
        int64_t p = pg__models_predict(rt, c->kernel->name, dev, pg__models_args_bytes(c));
        c->pred_ns = p > 0 ? (uint64_t)p : 0;
        rt->dev[dev].queued_ns += c->pred_ns;
    }
}

static void take(uint64_t *q, uint64_t *v) {
    *q = *q > *v ? *q - *v : 0;
    *v = 0;
}

void pg__models_queue_done(pg__runtime *rt, pg__comp *c) {
    if (c->device < 0 || c->device >= rt->ndev) {
        c->pred_ns = c->est_ns = 0;
        return;
    }
    take(&rt->dev[c->device].queued_ns, &c->pred_ns);
    take(&rt->dev[c->device].backlog_ns, &c->est_ns);
}

int pg__models_speed(pg__runtime *rt, double speed[PG_MAX_DEVICES]) {
    if (!rt->opt.models || rt->ndev < 1)
        return 0;
    double logsum[PG_MAX_DEVICES] = {0};
    int pairs = 0;
    for (int i = 0; i < rt->nmodels; i++) {
        const pg__model *m = &rt->models[i];
        /* each (kernel, bucket) once: from its model on device 0's class */
        if (m->cls != rt->dev_model_class[0] || m->n < CALIBRATED || !m->median)
            continue;
        double l[PG_MAX_DEVICES];
        int d = 0;
        for (; d < rt->ndev; d++) {
            const pg__model *o = find(rt, m->kernel, rt->dev_model_class[d], m->bucket);
            if (!o || o->n < CALIBRATED || !o->median)
                break;
            l[d] = -log((double)o->median);
        }
        if (d < rt->ndev)
            continue;
        for (d = 0; d < rt->ndev; d++)
            logsum[d] += l[d];
        pairs++;
    }
    for (int d = 0; pairs && d < rt->ndev; d++)
        speed[d] = exp(logsum[d] / pairs) * 1e9; /* runs per second */
    return pairs;
}

/* ---- persistence */

static void file_of(const pg__runtime *rt, int cls, char *out, size_t cap, int dir_only) {
    char name[128];
    size_t i = 0;
    for (const char *p = rt->model_class[cls]; *p && i + 1 < sizeof name; p++, i++) {
        char ch = *p;
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                 ch == '-' || ch == '.';
        name[i] = ok ? ch : '_';
    }
    name[i] = '\0';
    if (dir_only)
        snprintf(out, cap, "%s/models", rt->opt.cache_dir);
    else
        snprintf(out, cap, "%s/models/%s.csv", rt->opt.cache_dir, name);
}

/* One line: kernel,bytes,median_ns,samples,ns ns ns ... (the kept samples, oldest first). */
static void load_line(pg__runtime *rt, int cls, char *line) {
    char *comma = strchr(line, ',');
    if (!comma || line[0] == '#')
        return;
    *comma = '\0';
    char *p = comma + 1, *end;
    unsigned long long bucket = strtoull(p, &end, 10);
    if (end == p || *end != ',')
        return;
    p = end + 1;
    strtoull(p, &end, 10); /* the median: recomputed from the samples */
    if (end == p || *end != ',')
        return;
    p = end + 1;
    strtol(p, &end, 10);
    if (end == p || *end != ',')
        return;
    p = end + 1;
    if (find(rt, line, cls, bucket))
        return;
    pg__model *m = add(rt, line, cls, bucket);
    if (!m)
        return;
    while (m->n < PG__MODEL_KEEP) {
        unsigned long long ns = strtoull(p, &end, 10);
        if (end == p)
            break;
        m->ns[m->n++] = ns;
        p = end;
    }
    update_median(m);
}

void pg__models_load(pg__runtime *rt) {
    for (int d = 0; d < rt->ndev; d++) {
        const pg_device_info *in = &rt->dev[d].info;
        char name[128];
        /* A CPU device's name carries its index: the class is its thread count. */
        if (in->device_class == PG_CLASS_CPU)
            snprintf(name, sizeof name, "CPU device (%d thread%s)", in->multiprocessors,
                     in->multiprocessors == 1 ? "" : "s");
        else
            snprintf(name, sizeof name, "%s", in->name);
        int cls = class_of(rt, name, 1);
        rt->dev_model_class[d] = cls < 0 ? 0 : cls;
    }
    if (!rt->opt.models)
        return;
    for (int cls = 0; cls < rt->nmodel_class; cls++) {
        char path[1200], *data = NULL;
        size_t len = 0;
        file_of(rt, cls, path, sizeof path, 0);
        if (pg__kcache_read(path, &data, &len) != 0)
            continue; /* none yet, or unreadable: start empty */
        for (char *line = data, *next; line && *line; line = next) {
            next = strchr(line, '\n');
            if (next)
                *next++ = '\0';
            load_line(rt, cls, line);
        }
        pg__free(data);
    }
    pg__log(rt, 1, "models: %d loaded from %s/models", rt->nmodels, rt->opt.cache_dir);
}

pg_status pg__models_save(pg__runtime *rt) {
    if (!rt->opt.models || !rt->nmodels)
        return PG_OK;
    char dir[1200];
    file_of(rt, 0, dir, sizeof dir, 1);
    if (pg__kcache_dir(dir) != 0) {
        pg__log(rt, 1, "models: not saved: the folder %s cannot be used", dir);
        return PG_OK; /* a cache: losing it costs calibration, not correctness */
    }
    for (int cls = 0; cls < rt->nmodel_class; cls++) {
        size_t cap = 256, len = 0;
        char *buf = pg__malloc(cap);
        if (!buf)
            return PG_OK;
        len = (size_t)snprintf(buf, cap,
                               "# polygpu performance models for %s: kernel,bytes,"
                               "median_ns,samples,kept samples in ns\n",
                               rt->model_class[cls]);
        int any = 0;
        for (int e = 0; e < rt->nmodels && buf; e++) {
            const pg__model *m = &rt->models[e];
            if (m->cls != cls || !m->n || strpbrk(m->kernel, ",\n#"))
                continue;
            size_t need = len + 64 + sizeof m->kernel + (size_t)m->n * 21;
            if (need > cap) {
                char *nb = pg__realloc(buf, cap = 2 * need);
                if (!nb) {
                    pg__free(buf);
                    buf = NULL;
                    break;
                }
                buf = nb;
            }
            len += (size_t)snprintf(buf + len, cap - len, "%s,%llu,%llu,%d,", m->kernel,
                                    (unsigned long long)m->bucket, (unsigned long long)m->median,
                                    m->n);
            for (int i = 0; i < m->n; i++)
                len += (size_t)snprintf(buf + len, cap - len, "%s%llu", i ? " " : "",
                                        (unsigned long long)m->ns[(m->head + i) % PG__MODEL_KEEP]);
            buf[len++] = '\n';
            buf[len] = '\0';
            any = 1;
        }
        if (buf && any) {
            char path[1200];
            file_of(rt, cls, path, sizeof path, 0);
            if (pg__kcache_write_atomic(path, buf, len) != 0)
                pg__log(rt, 1, "models: %s could not be written", path);
        }
        pg__free(buf);
    }
    return PG_OK;
}

void pg__models_free(pg__runtime *rt) {
    pg__free(rt->models);
    pg__free(rt->model_index);
    rt->models = NULL;
    rt->model_index = NULL;
    rt->nmodels = rt->capmodels = 0;
    rt->model_index_cap = 0;
}

/* ---- the public listing */

pg_status pg_runtime_models(pg_runtime *h, int *count) {
    pg__error_clear();
    if (!count)
        return pg__error(PG_ERROR_ARGUMENT, "pg_runtime_models: count must not be NULL");
    pg__runtime *rt = pg__enter_runtime(h, "pg_runtime_models");
    if (!rt)
        return PG_ERROR_STATE;
    pg__comp_sweep(rt, 1 << 30); /* finished work's durations */
    *count = rt->nmodels;
    pg__leave(rt);
    return PG_OK;
}

pg_status pg_runtime_model(pg_runtime *h, int i, pg_model_info *out) {
    pg__error_clear();
    if (!out)
        return pg__error(PG_ERROR_ARGUMENT, "pg_runtime_model: out must not be NULL");
    pg__runtime *rt = pg__enter_runtime(h, "pg_runtime_model");
    if (!rt)
        return PG_ERROR_STATE;
    pg_status st = PG_OK;
    if (i < 0 || i >= rt->nmodels) {
        st = pg__error(PG_ERROR_ARGUMENT, "pg_runtime_model: index %d is outside 0..%d", i,
                       rt->nmodels - 1);
    } else {
        const pg__model *m = &rt->models[i];
        memset(out, 0, sizeof *out);
        snprintf(out->kernel, sizeof out->kernel, "%s", m->kernel);
        snprintf(out->device_class, sizeof out->device_class, "%s", rt->model_class[m->cls]);
        out->bytes = m->bucket;
        out->median_ns = m->median;
        out->samples = m->n;
    }
    pg__leave(rt);
    return st;
}

pg_status pg_runtime_model_sample(pg_runtime *h, const char *kernel, int device, uint64_t bytes,
                                  uint64_t ns) {
    pg__error_clear();
    if (!kernel || !*kernel)
        return pg__error(PG_ERROR_ARGUMENT, "pg_runtime_model_sample: kernel must be a name");
    pg__runtime *rt = pg__enter_runtime(h, "pg_runtime_model_sample");
    if (!rt)
        return PG_ERROR_STATE;
    pg_status st = PG_OK;
    if (device < 0 || device >= rt->ndev)
        st = pg__error(PG_ERROR_ARGUMENT, "pg_runtime_model_sample: no device %d (0..%d)", device,
                       rt->ndev - 1);
    else if (!rt->opt.models)
        st = pg__error(PG_ERROR_STATE, "pg_runtime_model_sample: the runtime's models are off "
                                       "(option models)");
    else
        pg__models_sample(rt, kernel, device, bytes, ns);
    pg__leave(rt);
    return st;
}

/* ---- for libraries on the API (linalg/) */

pg_status pg_runtime_model_predict(pg_runtime *h, const char *kernel, int device, uint64_t bytes,
                                   uint64_t *ns) {
    pg__error_clear();
    if (!kernel || !ns)
        return pg__error(PG_ERROR_ARGUMENT, "pg_runtime_model_predict: kernel and ns are required");
    pg_status st;
    pg__runtime *rt = pg__enter_device(h, device, "pg_runtime_model_predict", &st);
    if (!rt)
        return st;
    int64_t p = pg__models_predict(rt, kernel, device, bytes);
    *ns = p > 0 ? (uint64_t)p : 0;
    pg__leave(rt);
    return PG_OK;
}

pg_status pg_runtime_model_class(pg_runtime *h, int device, char *out, size_t cap) {
    pg__error_clear();
    if (!out || !cap)
        return pg__error(PG_ERROR_ARGUMENT, "pg_runtime_model_class: out and cap are required");
    pg_status st;
    pg__runtime *rt = pg__enter_device(h, device, "pg_runtime_model_class", &st);
    if (!rt)
        return st;
    snprintf(out, cap, "%s", rt->model_class[rt->dev_model_class[device]]);
    pg__leave(rt);
    return PG_OK;
}

pg_status pg_runtime_device_throughput(pg_runtime *h, int device, double *threads) {
    pg__error_clear();
    if (!threads)
        return pg__error(PG_ERROR_ARGUMENT,
                         "pg_runtime_device_throughput: threads_per_s must not be NULL");
    pg_status st;
    pg__runtime *rt = pg__enter_device(h, device, "pg_runtime_device_throughput", &st);
    if (!rt)
        return st;
    *threads = threads_per_s(&rt->dev[device].info);
    pg__leave(rt);
    return PG_OK;
}
