/* runtime.c: runtime lifetime — options, backend choice, devices, interconnect, stats. */
#include "core/array.h"
#include "core/bounds.h"
#include "core/comp.h"
#include "core/engine.h"
#include "core/exec.h"
#include "core/graph.h"
#include "core/handle.h"
#include "core/kernel.h"
#include "core/launch_limits.h"
#include "core/links.h"
#include "core/models.h"
#include "core/observe.h"
#include "core/options.h"
#include "core/pieces.h"
#include "core/profile.h"
#include "core/ranks.h"
#include "core/streams.h"
#include "core/util.h"
#include "core/waits.h"
#include "core/power.h"
#include "core/share.h"
#include "devices/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Open what `devices` names through the registry (devices/registry.h): one backend, or
 * several behind one ops table. Several ranks on this node share its GPUs (core/ranks.c
 * pg__ranks_gpu_spec picks this rank's). */
static pg_status open_backend(pg__runtime *rt, int local_rank, int local_size) {
    pg__open_args a = {
        .timing = rt->opt.trace[0] != 0 || rt->opt.profile[0] != 0 || rt->opt.models,
        .check_bounds = rt->opt.check_bounds,
        .cache_dir = rt->opt.cache_dir,
        .local_rank = local_rank,
        .local_size = local_size,
        .share = pg__ranks_gpu_spec,
    };
    pg__devices d;
    char no_gpu[512];
    pg_status st = pg__devices_open(rt->opt.devices, &a, &d, no_gpu, sizeof no_gpu);
    if (st)
        return st;
    /* Expected on a machine without a GPU: logged. */
    if (no_gpu[0])
        pg__log(rt, 1, "no usable GPU (%s); using CPU devices", no_gpu);
    rt->ops = d.ops;
    rt->b = d.b;
    rt->ndev = d.ndev;
    for (int i = 0; i < d.ndev; i++)
        rt->dev[i].entry = d.entry[i];
    /* A backend that knows its links (simulated machines) gives them to the policies, unless
     * the interconnect option names a file. Alone only: beside another backend its file would
     * not cover the other's devices. */
    const pg__backend_entry *e = d.entry[0];
    if (d.nbackends == 1 && e->links_file && !rt->opt.interconnect[0] &&
        e->links_file(rt->b, rt->opt.cache_dir, rt->opt.interconnect,
                      sizeof rt->opt.interconnect)) {
        pg__log(rt, 1, "%s: %s; the policies see uniform links", e->name, pg_last_error());
        pg__error_clear();
        snprintf(rt->opt.interconnect, sizeof rt->opt.interconnect, "default");
    }
    return PG_OK;
}

static void destroy(pg__runtime *rt) {
    pg__share_close(rt);
    pg__ranks_close(rt);
    if (rt->b) {
        pg__bounds_free(rt);
        pg__streams_free(rt);
        rt->ops->close(rt->b);
    }
    pg__records_free(rt->records);
    pg__free(rt->prof);
    pg__models_free(rt);
    pg__power_free(rt);
    pg__comp_pool_free(rt);
    pg__free(rt->first_failure);
    for (int d = 0; d < PG_MAX_DEVICES; d++)
        pg__free(rt->dev[d].failure);
    pg__policy_close(&rt->policy);
    pg__free(rt->arrays);
    pg__free(rt->kernels);
    pthread_cond_destroy(&rt->cond);
    pthread_mutex_destroy(&rt->mu);
    pg__free(rt);
}

pg_status pg_runtime_new(const pg_options *opts, pg_runtime **out) {
    pg__error_clear();
    if (!out)
        return pg__error(PG_ERROR_ARGUMENT, "pg_runtime_new: out must not be NULL");
    pg__runtime *rt = pg__calloc(1, sizeof *rt);
    if (!rt)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    pthread_mutex_init(&rt->mu, NULL);
    pthread_cond_init(&rt->cond, NULL);
    pg__engine_init(rt); /* the hooks lower modules reach upper ones through (core/engine.c) */
    rt->fork_gen = pg__fork_generation();
    pg_status st = pg__options_resolve(opts, &rt->opt);
    int local_rank = 0, local_size = 1;
    if (!st)
        st = pg__ranks_open(rt, &local_rank, &local_size);
    if (!st && (st = open_backend(rt, local_rank, local_size)))
        pg__error_wrap(st, "pg_runtime_new: opening devices '%s'", rt->opt.devices);
    if (!st && rt->ndev > PG_MAX_DEVICES)
        st = pg__error(PG_ERROR_UNSUPPORTED, "%d devices; polygpu drives at most %d", rt->ndev,
                       PG_MAX_DEVICES);
    rt->epoch_ns = pg__now_ns();
    /* The GPU's own timeline (CUPTI) beside the host's: recording starts before any work. */
    if (!st && rt->opt.trace[0] && rt->ops->gpu_trace_start)
        rt->ops->gpu_trace_start(rt->b);
    if (!st && rt->ops->uncomputed)
        rt->uncomputed = rt->ops->uncomputed(rt->b);
    rt->timing_all =
        rt->opt.trace[0] != 0 || rt->opt.profile[0] != 0 || (!st && !rt->ops->wants_timing_events);
    rt->timing = rt->timing_all || rt->opt.models;
    for (int d = 0; !st && d < rt->ndev; d++) {
        st = rt->ops->device_info(rt->b, d, &rt->dev[d].info);
        rt->dev[d].info.id = d;
        /* What the registry says of the device's backend, for bindings and placement. */
        rt->dev[d].info.device_class = rt->dev[d].entry->device_class;
        snprintf(rt->dev[d].info.backend, sizeof rt->dev[d].info.backend, "%s",
                 rt->dev[d].entry->name);
    }
    if (!st) {
        pg__share_open(rt);
        pg__limits_init(rt);
        pg__models_load(rt);
        if (!(st = pg__power_init(rt)))
            st = pg__power_choose(rt); /* with the models just loaded */
    }
    if (!st && (st = pg__links_init(rt)))
        pg__error_wrap(st,
                       "pg_runtime_new: reading the interconnect matrix '%s' (option "
                       "interconnect)",
                       rt->opt.interconnect);
    if (!st)
        st = pg__policy_open(rt->opt.policy, rt->ndev, &rt->policy);
    if (!st && !(rt->records = pg__records_new()))
        st = pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    if (!st && !(rt->handle = pg__handle_new(PG__H_RUNTIME, rt, rt)))
        st = pg__error(PG_ERROR_OUT_OF_MEMORY, "out of handles");
    if (st) {
        destroy(rt);
        return st;
    }
    rt->stats.ndevices = rt->ndev;
    rt->stats.rank = rt->rank;
    rt->stats.nranks = rt->nranks;
    pg__log(rt, 1, "runtime: %d %s device(s), policy %s", rt->ndev, rt->ops->name, rt->policy.name);
    if (rt->opt.elide_copies)
        pg__log(rt, 1,
                "elide_copies: every copy between locations is skipped: results are wrong "
                "(a limit study; timings only)");
    *out = (pg_runtime *)(uintptr_t)rt->handle;
    return PG_OK;
}

/* A close that cannot finish (a kernel that never ends, a thread stuck inside a call): the
 * handles go, so every later call is refused, but the memory and the devices' threads stay,
 * since unfinished work may still use them. The status says what was left running. */
static pg_status abandon(pg__runtime *rt, pg_status why) {
    pg__lock(rt);
    char left[512] = "";
    size_t len = 0;
    int n = 0;
    for (pg__comp *c = rt->inflight_head; c; c = c->next)
        if (!pg__comp_known_done(c) && n++ < 4 && len < sizeof left)
            len += (size_t)snprintf(left + len, sizeof left - len, "%s%s #%llu on device %d",
                                    len ? ", " : "",
                                    c->kind == PG__KERNEL   ? c->kernel->name
                                    : c->kind == PG__REPLAY ? "a graph replay"
                                                            : "a copy",
                                    (unsigned long long)c->id, c->device);
    for (int i = 0; i < rt->narrays; i++)
        pg__handle_release(rt->arrays[i]->handle);
    for (int i = 0; i < rt->nkernels; i++)
        pg__handle_release(rt->kernels[i]->handle);
    pg__graph_forget_handles(rt);
    pg__unlock(rt);
    return pg__error(why,
                     "pg_runtime_free: closed with work still running (%s%s); its devices and "
                     "memory were abandoned to the process",
                     n ? left : "another thread's call", n > 4 ? ", ..." : "");
}

static pg_status close_runtime(pg_runtime *h, uint64_t timeout_ns) {
    pg__error_clear();
    int forked = 0;
    pg__runtime *rt = pg__close_begin((uint64_t)(uintptr_t)h, "pg_runtime_free", &forked);
    if (!rt)
        return PG_ERROR_STATE;
    if (forked) {
        /* Inherited through fork(): its worker threads and devices are the parent's, and its
         * locks may be held by threads that do not exist here. Forget it; the memory goes
         * with the process. */
        return PG_OK;
    }
    uint64_t outer = pg__wait_deadline_push(timeout_ns);
    /* Other threads' calls now end: new ones are refused, waits for mappings give up. */
    pg__lock(rt);
    pthread_cond_broadcast(&rt->cond);
    pg__unlock(rt);
    if (pg__close_wait_unpinned(rt, timeout_ns)) {
        pg__wait_deadline_pop(outer);
        return abandon(rt, PG_ERROR_TIMEOUT);
    }
    pg__lock(rt);
    /* Release open host accesses: nobody can end them once the runtime is gone. */
    for (int i = 0; i < rt->narrays; i++)
        while (rt->arrays[i]->map_count)
            pg__exec_host_end(rt, rt->arrays[i]);
    pg_status wst = pg__array_write_home_all(rt); /* adopted memory: the last values */
    pg_status st = pg__exec_sync(rt);
    if (!st)
        st = wst;
    pg__unlock(rt);
    pg__wait_deadline_pop(outer);
    if (st == PG_ERROR_TIMEOUT || st == PG_ERROR_INTERRUPTED)
        return abandon(rt, st);
    if (!st && rt->opt.trace[0])
        st = pg__trace_write_file(rt, rt->opt.trace);
    if (rt->opt.profile[0]) {
        pg__lock(rt);
        pg__comp_sweep(rt, 1 << 30); /* the last kernels' durations */
        pg_status pst = pg__profile_write(rt);
        pg__unlock(rt);
        if (!st)
            st = pst;
    }
    if (rt->opt.models) {
        pg__lock(rt);
        pg__comp_sweep(rt, 1 << 30);
        pg_status mst = pg__models_save(rt);
        pg__unlock(rt);
        if (!st)
            st = mst;
    }
    pg__lock(rt);
    while (rt->narrays) {
        pg__array *a = rt->arrays[rt->narrays - 1];
        pg__handle_release(a->handle);
        rt->narrays--;
        pg__array_user_gone(a); /* the last user of a root lets its pieces go */
        pg__array_unref(a);
    }
    pg__graph_free_all(rt); /* their recorded calls hold the arrays and kernels */
    while (rt->nkernels) {
        pg__kernel *k = rt->kernels[--rt->nkernels];
        pg__handle_release(k->handle);
        pg__kernel_unref(k);
    }
    pg__comp_sweep(rt, 1 << 30);
    pg__unlock(rt);
    /* Libraries' state (pg_runtime_attach), once nothing of theirs can be running. */
    for (int i = rt->nattached - 1; i >= 0; i--)
        if (rt->attached[i].release)
            rt->attached[i].release(rt->attached[i].value);
    destroy(rt);
    return st;
}

pg_status pg_runtime_clock(pg_runtime *h, uint64_t *ns) {
    pg__error_clear();
    if (!ns)
        return pg__error(PG_ERROR_ARGUMENT, "pg_runtime_clock: ns must not be NULL");
    pg__runtime *rt = pg__enter_runtime(h, "pg_runtime_clock");
    if (!rt)
        return PG_ERROR_STATE;
    *ns = rt->ops->clock_ns ? rt->ops->clock_ns(rt->b) : pg__now_ns() - rt->epoch_ns;
    pg__leave(rt);
    return PG_OK;
}

pg_status pg_runtime_free(pg_runtime *h) {
    return close_runtime(h, UINT64_MAX);
}

pg_status pg_runtime_free_timeout(pg_runtime *h, uint64_t timeout_ns) {
    return close_runtime(h, timeout_ns);
}

static pg_status sync_for(pg_runtime *h, uint64_t timeout_ns, const char *fn) {
    pg__error_clear();
    pg__runtime *rt = pg__enter_runtime(h, fn);
    if (!rt)
        return PG_ERROR_STATE;
    pg_status st = pg__graph_refuse(rt, fn, NULL);
    if (st) {
        pg__leave(rt);
        return st;
    }
    uint64_t outer = pg__wait_deadline_push(timeout_ns);
    st = pg__array_write_home_all(rt); /* adopted memory gets values made elsewhere */
    if (!st)
        st = pg__exec_sync(rt);
    pg__wait_deadline_pop(outer);
    if (!st)
        st = pg__comp_failures_take(rt); /* a fault since the last sync, as CUDA reports one */
    pg__leave(rt);
    return st;
}

pg_status pg_runtime_sync_timeout(pg_runtime *h, uint64_t timeout_ns) {
    return sync_for(h, timeout_ns, "pg_runtime_sync_timeout");
}

pg_status pg_runtime_sync(pg_runtime *h) {
    return sync_for(h, UINT64_MAX, "pg_runtime_sync");
}

pg_status pg_runtime_devices(pg_runtime *h, pg_device_info *out, int capacity, int *count) {
    pg__error_clear();
    if (!count || (capacity > 0 && !out))
        return pg__error(PG_ERROR_ARGUMENT, "pg_runtime_devices: count (and out) must not be NULL");
    pg__runtime *rt = pg__enter_runtime(h, "pg_runtime_devices");
    if (!rt)
        return PG_ERROR_STATE;
    for (int d = 0; d < rt->ndev && d < capacity; d++)
        out[d] = rt->dev[d].info;
    *count = rt->ndev;
    pg__leave(rt);
    return PG_OK;
}

pg_status pg_runtime_stats(pg_runtime *h, pg_stats *out) {
    pg__error_clear();
    if (!out)
        return pg__error(PG_ERROR_ARGUMENT, "pg_runtime_stats: out must not be NULL");
    pg__runtime *rt = pg__enter_runtime(h, "pg_runtime_stats");
    if (!rt)
        return PG_ERROR_STATE;
    *out = rt->stats;
    pg__power_stats(rt, out);
    pg__leave(rt);
    return PG_OK;
}

pg_status pg_policy_register(const char *name, const pg_device_policy *policy) {
    pg__error_clear();
    return pg__policy_add(name, policy);
}

/* ---- for libraries on the API (linalg/): what a device is, state per runtime */

pg_status pg_runtime_devices_usable(pg_runtime *h, uint32_t *mask) {
    pg__error_clear();
    if (!mask)
        return pg__error(PG_ERROR_ARGUMENT, "pg_runtime_devices_usable: mask must not be NULL");
    pg__runtime *rt = pg__enter_runtime(h, "pg_runtime_devices_usable");
    if (!rt)
        return PG_ERROR_STATE;
    uint32_t m = 0;
    for (int d = 0; d < rt->ndev; d++)
        if (!rt->dev[d].failed && (!rt->power || rt->power->allowed >> d & 1))
            m |= 1u << d;
    *mask = m;
    pg__leave(rt);
    return PG_OK;
}

pg_status pg_runtime_device_memory(pg_runtime *h, int device, uint64_t *bytes) {
    pg__error_clear();
    if (!bytes)
        return pg__error(PG_ERROR_ARGUMENT, "pg_runtime_device_memory: bytes must not be NULL");
    pg_status st;
    pg__runtime *rt = pg__enter_device(h, device, "pg_runtime_device_memory", &st);
    if (!rt)
        return st;
    /* What core/evict.c keeps a device's buffers under. */
    *bytes = rt->opt.device_memory_limit ? rt->opt.device_memory_limit
                                         : rt->dev[device].info.memory_bytes;
    pg__leave(rt);
    return PG_OK;
}

pg_status pg_runtime_cache_dir(pg_runtime *h, char *out, size_t cap) {
    pg__error_clear();
    if (!out || !cap)
        return pg__error(PG_ERROR_ARGUMENT, "pg_runtime_cache_dir: out and cap are required");
    pg__runtime *rt = pg__enter_runtime(h, "pg_runtime_cache_dir");
    if (!rt)
        return PG_ERROR_STATE;
    pg_status st = PG_OK;
    if (strlen(rt->opt.cache_dir) >= cap)
        st = pg__error(PG_ERROR_ARGUMENT,
                       "pg_runtime_cache_dir: %zu bytes do not hold the %zu of %s", cap,
                       strlen(rt->opt.cache_dir) + 1, rt->opt.cache_dir);
    else
        snprintf(out, cap, "%s", rt->opt.cache_dir);
    pg__leave(rt);
    return st;
}

pg_status pg_runtime_attach(pg_runtime *h, const void *key, void *value,
                            void (*release)(void *value), void **kept) {
    pg__error_clear();
    if (!key)
        return pg__error(PG_ERROR_ARGUMENT, "pg_runtime_attach: key must not be NULL");
    pg__runtime *rt = pg__enter_runtime(h, "pg_runtime_attach");
    if (!rt)
        return PG_ERROR_STATE;
    pg_status st = PG_OK;
    int i = 0;
    while (i < rt->nattached && rt->attached[i].key != key)
        i++;
    if (i == rt->nattached) {
        if (i == PG__ATTACH_MAX) {
            st = pg__error(PG_ERROR_OUT_OF_MEMORY,
                           "pg_runtime_attach: the runtime keeps at most %d keys, all taken",
                           PG__ATTACH_MAX);
        } else {
            rt->attached[i].key = key;
            rt->attached[i].value = value;
            rt->attached[i].release = release;
            rt->nattached++;
        }
    }
    if (!st && kept)
        *kept = rt->attached[i].value;
    pg__leave(rt);
    return st;
}

pg_status pg_runtime_attached(pg_runtime *h, const void *key, void **value) {
    pg__error_clear();
    if (!key || !value)
        return pg__error(PG_ERROR_ARGUMENT, "pg_runtime_attached: key and value are required");
    pg__runtime *rt = pg__enter_runtime(h, "pg_runtime_attached");
    if (!rt)
        return PG_ERROR_STATE;
    *value = NULL;
    for (int i = 0; i < rt->nattached; i++)
        if (rt->attached[i].key == key)
            *value = rt->attached[i].value;
    pg__leave(rt);
    return PG_OK;
}
