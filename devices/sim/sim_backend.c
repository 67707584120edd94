/* sim_backend.c: simulated GPUs behind pg__backend_ops — devices from the topology, memory,
 * streams and events over the virtual-time engine, and the host's clock.
 *
 * The host's clock is the engine's: virtual nanoseconds since the backend opened. At the start
 * of every call it moves forward by the real time the host spent outside the backend since the
 * previous call left it (times host_time: 0 freezes it); time inside calls (the simulator's own
 * work, kernels run for real with compute=cpu) does not count. Launches, memsets and copies
 * then add the topology's launch_us / copy_us (the driver's share a real GPU would cost) and are
 * enqueued at that time. A host wait (event_wait, a sync, a read) moves the clock to when the
 * awaited work ends, at once; event_done asks whether it ended by the clock's time (with host
 * time frozen: whether a host wait showed it ended, sim_observe.h). One clock for all threads:
 * a thread's wait moves it for every thread. */
#include "base/alloc.h"
#include "base/error.h"
#include "base/vclock.h"
#include "devices/registry.h"
#include "devices/sim/sim_backend.h"
#include "devices/sim/sim_internal.h"
#include "devices/sim/sim_profile.h"
#include "nvrtc/kernel_cache.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t wall_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The host's clock: the wall clock, or with host_clock=cpu the calling thread's CPU time (ranks
 * of a simulated cluster share this machine's few cores: their wall time would count the
 * others' turns). A thread's CPU time means nothing to another thread: a call from a thread other
 * than the last one's counts no host time. */
static uint64_t host_ns(const pg__backend *b) {
    if (!b->spec.host_cpu)
        return wall_ns();
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void host_mark(pg__backend *b) {
    b->last_exit_ns = host_ns(b);
    b->last_thread = pthread_self();
}

void pg__sim_enter(pg__backend *b) {
    pthread_mutex_lock(&b->mu);
    if (b->spec.host_time > 0) {
        uint64_t w = host_ns(b);
        if (w > b->last_exit_ns &&
            (!b->spec.host_cpu || pthread_equal(b->last_thread, pthread_self())))
            pg__sim_advance_to(b->eng, pg__sim_now(b->eng) +
                                           (double)(w - b->last_exit_ns) * b->spec.host_time);
        b->last_exit_ns = w; /* counted: a second enter in one call adds nothing twice */
        b->last_thread = pthread_self();
    }
}

void pg__sim_leave(pg__backend *b) {
    if (b->spec.host_time > 0)
        host_mark(b);
    pthread_mutex_unlock(&b->mu);
}

/* The clock other layers see (base/vclock.h): a simulated cluster's transport calls count as
 * backend calls (their own time does not count), and a message's arrival moves the clock. */
static void vc_enter(void *ctx) {
    pg__backend *b = ctx;
    pg__sim_enter(b);
    pthread_mutex_unlock(&b->mu);
}

static void vc_leave(void *ctx) {
    pg__backend *b = ctx;
    pthread_mutex_lock(&b->mu);
    pg__sim_leave(b);
}

static double vc_now(void *ctx) {
    pg__backend *b = ctx;
    pthread_mutex_lock(&b->mu);
    double t = pg__sim_now(b->eng);
    pthread_mutex_unlock(&b->mu);
    return t;
}

static void vc_advance_to(void *ctx, double t) {
    pg__backend *b = ctx;
    pthread_mutex_lock(&b->mu);
    if (t > pg__sim_now(b->eng))
        pg__sim_advance_to(b->eng, t);
    pthread_mutex_unlock(&b->mu);
}

static const pg__vclock_ops vclock_ops = {vc_enter, vc_leave, vc_now, vc_advance_to};

void pg__sim_host_spends(pg__backend *b, double us) {
    if (us > 0)
        pg__sim_advance_to(b->eng, pg__sim_now(b->eng) + us * 1e3);
}

pg__sim_op *pg__sim_submit(pg__backend *b, pg__bstream *s, const pg__sim_work *w,
                           pg__sim_op *const *deps, int ndeps) {
    uint64_t seq;
    if (b->frozen && pg__sim_obs_enqueue(&b->obs, s->slot, &s->vc, &seq))
        return NULL;
    return pg__sim_enqueue(b->eng, s->q, w, deps, ndeps);
}

void pg__sim_timing_attach(pg__timing *t, pg__sim_op *op) {
    if (!t) {
        pg__sim_op_unref(op);
        return;
    }
    t->start_ns = t->end_ns = 0;
    t->priv[0] = op;
}

double pg__sim_backend_now(pg__backend *b) {
    pthread_mutex_lock(&b->mu);
    double t = pg__sim_now(b->eng);
    pthread_mutex_unlock(&b->mu);
    return t;
}

/* The virtual clock as the script sees it now: with the host's time since its last call. */
static uint64_t sim_clock_ns(pg__backend *b) {
    pg__sim_enter(b);
    double t = pg__sim_now(b->eng);
    pg__sim_leave(b);
    return t > 0 ? (uint64_t)t : 0;
}

static void sim_close(pg__backend *b) {
    pg__vclock_unregister(b);
    for (int i = 0; i < b->nstreams; i++) {
        pg__sim_vc_free(&b->streams[i]->vc);
        pg__free(b->streams[i]); /* their queues go with the engine */
    }
    pg__free(b->streams);
    pg__sim_obs_close(&b->obs);
    pg__sim_engine_free(b->eng);
    pg__sim_cpu_close(b);
    pg__sim_mem_close(&b->mem);
    pg__sim_profile_free(b->profile);
    pg__free(b->topo);
    pthread_mutex_destroy(&b->cpu_mu);
    pthread_mutex_destroy(&b->mu);
    pg__free(b);
}

static pg_status sim_device_info(pg__backend *b, int dev, pg_device_info *out) {
    if (dev < 0 || dev >= b->topo->ngpu)
        return pg__error(PG_ERROR_INTERNAL, "simulated GPU %d does not exist (there are %d)", dev,
                         b->topo->ngpu);
    *out = b->topo->gpu[dev].info;
    out->id = dev;
    return PG_OK;
}

static pg_status sim_host_alloc(pg__backend *b, size_t bytes, void **out) {
    /* calloc: large zeroed blocks come as untouched pages, so simulated arrays the host never
     * fills cost no memory. */
    if (!(*out = pg__calloc(1, bytes ? bytes : 1)))
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory: %zu bytes for an array",
                         bytes);
    return PG_OK;
}

static void sim_host_free(pg__backend *b, void *p) {
    pg__free(p);
}

static pg_status sim_dev_alloc(pg__backend *b, int dev, size_t bytes, pg__bstream *s, void **out) {
    if (dev < 0 || dev >= b->topo->ngpu)
        return pg__error(PG_ERROR_INTERNAL, "simulated GPU %d does not exist", dev);
    pg__sim_enter(b);
    pg__sim_mem_result r = pg__sim_mem_alloc(&b->mem, dev, bytes, out);
    unsigned long long used = b->mem.used[dev], cap = b->mem.capacity[dev];
    pg__sim_leave(b);
    if (r == PG__SIM_MEM_FULL)
        return pg__error(PG_ERROR_OUT_OF_MEMORY,
                         "simulated GPU %d (%s) is out of memory: %zu bytes asked, %llu of %llu "
                         "bytes in use",
                         dev, b->topo->gpu[dev].info.name, bytes, used, cap);
    if (r == PG__SIM_MEM_HOST_OOM)
        return pg__error(PG_ERROR_OUT_OF_MEMORY,
                         "out of host memory for %zu bytes of simulated GPU %d (compute=cpu, the "
                         "default, keeps device buffers in host memory; compute=none times work "
                         "larger than this host without doing it)",
                         bytes, dev);
    return PG_OK;
}

static void sim_dev_free(pg__backend *b, int dev, void *p) {
    pg__sim_enter(b);
    pg__sim_mem_free(&b->mem, p);
    pg__sim_leave(b);
}

static pg_status sim_stream_new(pg__backend *b, int dev, pg__bstream **out) {
    if (dev < 0 || dev >= b->topo->ngpu)
        return pg__error(PG_ERROR_INTERNAL, "simulated GPU %d does not exist", dev);
    pg__bstream *s = pg__calloc(1, sizeof *s);
    pg_status st = PG_OK;
    pg__sim_enter(b);
    if (s && b->nstreams == b->scap) {
        int ncap = b->scap ? 2 * b->scap : 16;
        pg__bstream **n = pg__realloc(b->streams, (size_t)ncap * sizeof *n);
        if (n) {
            b->streams = n;
            b->scap = ncap;
        }
    }
    if (!s || b->nstreams == b->scap)
        st = PG_ERROR_OUT_OF_MEMORY;
    if (!st && !(s->q = pg__sim_queue_new(b->eng)))
        st = PG_ERROR_OUT_OF_MEMORY;
    if (!st && (s->slot = pg__sim_obs_slot_new(&b->obs)) < 0) {
        pg__sim_queue_free(b->eng, s->q);
        st = PG_ERROR_OUT_OF_MEMORY;
    }
    if (!st) {
        s->dev = dev;
        b->streams[b->nstreams++] = s;
    }
    pg__sim_leave(b);
    if (st) {
        pg__free(s);
        return pg__error(st, "out of host memory for a stream of simulated GPU %d", dev);
    }
    *out = s;
    return PG_OK;
}

static void sim_stream_free(pg__backend *b, pg__bstream *s) {
    if (!s)
        return;
    pg__sim_enter(b);
    for (int i = 0; i < b->nstreams; i++) {
        if (b->streams[i] == s) {
            b->streams[i] = b->streams[--b->nstreams];
            break;
        }
    }
    pg__sim_queue_free(b->eng, s->q);
    pg__sim_obs_slot_free(&b->obs, s->slot);
    pg__sim_leave(b);
    pg__sim_vc_free(&s->vc);
    pg__free(s);
}

static void sim_event_free(pg__backend *b, pg__bevent *e);

static pg_status sim_event_record(pg__backend *b, pg__bstream *s, pg__bevent **out) {
    pg__bevent *e = pg__calloc(1, sizeof *e);
    if (!e)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory for an event");
    pg__sim_enter(b);
    e->op = pg__sim_queue_last(s->q);
    if (e->op)
        pg__sim_op_ref(e->op);
    int bad = 0;
    if (b->frozen) {
        e->slot = s->slot;
        e->seq = pg__sim_obs_last(&b->obs, s->slot);
        bad = pg__sim_vc_merge(&b->obs, &e->vc, &s->vc);
    }
    pg__sim_leave(b);
    if (bad) {
        sim_event_free(b, e);
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory for an event");
    }
    *out = e;
    return PG_OK;
}

static int sim_event_done(pg__backend *b, pg__bevent *e) {
    pg__sim_enter(b);
    /* Frozen: what a host wait showed finished (sim_observe.h); else: finished by now. */
    int done =
        b->frozen ? pg__sim_obs_seen(&b->obs, e->slot, e->seq) : !e->op || pg__sim_op_done(e->op);
    pg__sim_leave(b);
    return done;
}

static pg_status sim_event_wait_for(pg__backend *b, pg__bevent *e, uint64_t timeout_ns) {
    pg__sim_enter(b);
    double limit = timeout_ns == UINT64_MAX ? INFINITY : pg__sim_now(b->eng) + (double)timeout_ns;
    int done = !e->op || pg__sim_run_until(b->eng, e->op, limit);
    if (done && b->frozen)
        pg__sim_obs_saw(&b->obs, &e->vc);
    pg__sim_leave(b);
    if (done)
        return PG_OK;
    if (limit == INFINITY)
        return pg__error(PG_ERROR_INTERNAL,
                         "sim: waited for work that can never run (it waits on a freed stream)");
    return PG_ERROR_TIMEOUT;
}

static pg_status sim_event_wait(pg__backend *b, pg__bevent *e) {
    return sim_event_wait_for(b, e, UINT64_MAX);
}

static pg_status sim_event_error(pg__backend *b, pg__bevent *e, int *failed_dev, char *msg,
                                 size_t cap) {
    *failed_dev = -1;
    pg__sim_enter(b);
    const char *why = e->op ? pg__sim_op_failure(e->op, failed_dev) : NULL;
    if (why && cap)
        snprintf(msg, cap, "%s", why);
    pg__sim_leave(b);
    return why ? PG_ERROR_DEVICE : PG_OK;
}

static pg_status sim_stream_wait(pg__backend *b, pg__bstream *s, pg__bevent *e) {
    pg_status st = PG_OK;
    pg__sim_enter(b);
    if (b->frozen && pg__sim_vc_merge(&b->obs, &s->vc, &e->vc))
        st = pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory for a stream wait");
    if (!st && e->op && !pg__sim_op_done(e->op)) {
        /* A marker: nothing to do, but nothing after it on s starts before e's work ends. */
        pg__sim_op *m = pg__sim_submit(b, s, NULL, &e->op, 1);
        if (!m)
            st = pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory for a stream wait");
        pg__sim_op_unref(m);
    }
    pg__sim_leave(b);
    return st;
}

static void sim_event_free(pg__backend *b, pg__bevent *e) {
    if (!e)
        return;
    pg__sim_enter(b);
    pg__sim_op_unref(e->op);
    pg__sim_leave(b);
    pg__sim_vc_free(&e->vc);
    pg__free(e);
}

static void sim_timing_resolve(pg__backend *b, pg__timing *t) {
    pg__sim_op *op = t->priv[0];
    if (!op)
        return;
    pg__sim_enter(b);
    /* The core asks once the work finished; should it ask before, it waits for it. */
    pg__sim_run_until(b->eng, op, INFINITY);
    double start, end;
    pg__sim_op_times(op, &start, &end);
    pg__sim_leave(b);
    t->start_ns = (uint64_t)llround(start);
    t->end_ns = (uint64_t)llround(end);
}

static void sim_timing_release(pg__backend *b, pg__timing *t) {
    pg__sim_op *op = t->priv[0];
    if (!op)
        return;
    pg__sim_enter(b);
    pg__sim_op_unref(op);
    pg__sim_leave(b);
    t->priv[0] = NULL;
}

/* compute=none: device memory is addresses only and kernels do not run, so whatever a device
 * made is no value (core/array.c refuses to read it back). */
static const char *sim_uncomputed(pg__backend *b) {
    return b->spec.compute || b->spec.reads_any
               ? NULL
               : "compute no values: simulated GPUs with compute=none time the work "
                 "without doing it; use compute=cpu (the default, e.g. "
                 "devices=\"sim:dgx1-v100,compute=cpu\") to read results";
}

static const pg__backend_ops sim_ops = {
    .name = "sim",
    .close = sim_close,
    .device_info = sim_device_info,
    .host_alloc = sim_host_alloc,
    .host_free = sim_host_free,
    .dev_alloc = sim_dev_alloc,
    .dev_free = sim_dev_free,
    .memset_zero = pg__sim_memset_zero,
    .stream_new = sim_stream_new,
    .stream_free = sim_stream_free,
    .event_record = sim_event_record,
    .event_done = sim_event_done,
    .event_wait = sim_event_wait,
    .event_wait_for = sim_event_wait_for,
    .event_error = sim_event_error,
    .stream_wait = sim_stream_wait,
    .event_free = sim_event_free,
    .copy = pg__sim_copy,
    .kernel_build = pg__sim_kernel_build,
    .kernel_function = pg__sim_kernel_function,
    .kernel_free = pg__sim_kernel_free,
    .launch = pg__sim_launch,
    .graph_build = pg__sim_graph_build,
    .graph_launch = pg__sim_graph_launch,
    .graph_free = pg__sim_graph_free,
    .timing_resolve = sim_timing_resolve,
    .timing_release = sim_timing_release,
    .wants_timing_events = 0, /* virtual times cost nothing */
    .clock_ns = sim_clock_ns,
    .uncomputed = sim_uncomputed,
};

static pg_status make_engine(pg__backend *b) {
    const pg__sim_topo *t = b->topo;
    int nres = pg__sim_nres(b);
    double *cap = pg__calloc((size_t)nres, sizeof *cap);
    if (!cap)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory opening sim devices");
    for (int i = 0; i < t->nlinks; i++)
        cap[pg__sim_res_link(i)] = t->link[i].gbps; /* GB/s = bytes per ns */
    for (int i = 0; i < t->nduplex; i++)
        cap[pg__sim_res_duplex(b, i)] = t->duplex_gbps[i];
    for (int d = 0; d < t->ngpu; d++) {
        cap[pg__sim_res_compute(b, d)] = 1.0; /* the whole GPU; a kernel uses its share */
        cap[pg__sim_res_memory(b, d)] = t->gpu[d].mem_gbps;
    }
    cap[pg__sim_res_host(b)] = t->host_mem_gbps;
    cap[pg__sim_res_dma(b)] = t->host_dma_gbps > 0 ? t->host_dma_gbps : 1e300; /* unused if 0 */
    b->eng = pg__sim_engine_new(nres, cap, 2 * t->ngpu);
    pg__free(cap);
    return b->eng ? PG_OK
                  : pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory opening sim devices");
}

static pg_status open_parts(pg__backend *b, const char *spec) {
    pg_status st = pg__sim_spec_parse(spec, &b->spec);
    if (st)
        return st;
    if (!(b->topo = pg__calloc(1, sizeof *b->topo)))
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory opening sim devices");
    if ((st = pg__sim_topo_load(b->spec.topo, b->topo)))
        return st;
    if (b->spec.profile[0] &&
        (st = pg__sim_profile_load(b->spec.profile, b->topo->profile_us * 1e3, &b->profile)))
        return pg__error_wrap(st, "sim: reading the timing profile (profile=, PG_SIM_PROFILE)");
    if ((st = make_engine(b)))
        return st;
    b->mem.real = b->spec.compute;
    b->frozen = b->spec.host_time == 0;
    for (int d = 0; d < b->topo->ngpu; d++)
        b->mem.capacity[d] = b->topo->gpu[d].info.memory_bytes;
    if (b->spec.compute && (st = pg__sim_cpu_open(b)))
        return st;
    return PG_OK;
}

pg_status pg__sim_backend_open(const char *spec, int enable_timing, const pg__backend_ops **ops,
                               pg__backend **out, int *ndev) {
    pg__backend *b = pg__calloc(1, sizeof *b);
    if (!b)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory opening sim devices");
    pthread_mutex_init(&b->mu, NULL);
    pthread_mutex_init(&b->cpu_mu, NULL);
    pg_status st = open_parts(b, spec);
    if (st) {
        sim_close(b);
        return st;
    }
    host_mark(b);
    pg__vclock_register(&vclock_ops, b);
    *ops = &sim_ops;
    *out = b;
    *ndev = b->topo->ngpu;
    return PG_OK;
}

pg_status pg__sim_interconnect_file(pg__backend *b, const char *cache_dir, char *out, size_t cap) {
    char path[1200];
    int n = snprintf(path, sizeof path, "%s/sim-%s-%016llx.csv", cache_dir, b->topo->name,
                     (unsigned long long)b->topo->hash);
    if (n < 0 || (size_t)n >= sizeof path || (size_t)n >= cap)
        return pg__error(PG_ERROR_ARGUMENT, "sim: the interconnect file's path is too long");
    /* Named by the topology's content: present means written from this very topology. */
    if (access(path, R_OK) != 0) {
        if (pg__kcache_dir(cache_dir))
            return pg__error(PG_ERROR_IO, "sim: cannot use cache folder %s for the matrix file",
                             cache_dir);
        pg__interconnect m;
        pg__sim_topo_matrix(b->topo, &m);
        char tmp[1300];
        snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
        pg_status st = pg__interconnect_save(&m, tmp);
        if (!st && rename(tmp, path) != 0) {
            remove(tmp);
            st = pg__error(PG_ERROR_IO, "sim: cannot rename %s to %s", tmp, path);
        }
        if (st)
            return st;
    }
    snprintf(out, cap, "%s", path);
    return PG_OK;
}

static pg_status sim_check(const char *spec) {
    if (!spec[0])
        return pg__error(PG_ERROR_ARGUMENT,
                         "sim needs a machine: sim:PRESET or sim:/path/file.topo (e.g. "
                         "sim:dgx1-v100)");
    return PG_OK; /* the rest is checked when it opens */
}

static pg_status sim_entry_open(const char *spec, const pg__open_args *a,
                                const pg__backend_ops **ops, pg__backend **b, int *ndev) {
    return pg__sim_backend_open(spec, a->timing, ops, b, ndev);
}

/* Simulated GPUs: never in auto; the policies see the simulated links (links_file), never a
 * measurement, which would time the simulator. With compute=cpu its buffers are host memory,
 * but with compute=none they are addresses only, so it does not claim host-visible memory. */
const pg__backend_entry pg__sim_entry = {
    .name = "sim",
    .forms = "sim:PRESET (simulated GPUs, e.g. sim:dgx1-v100)",
    .device_class = PG_CLASS_GPU,
    .check = sim_check,
    .open = sim_entry_open,
    .links_file = pg__sim_interconnect_file,
    .profile_append = pg__sim_profile_append,
};
