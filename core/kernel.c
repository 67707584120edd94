/* kernel.c: kernels — compilation through the backend, parameters, argument checking, launch. */
#include "core/kernel.h"
#include "core/array.h"
#include "core/comp.h"
#include "core/exec.h"
#include "core/graph.h"
#include "core/handle.h"
#include "core/launch_limits.h"
#include "core/ranks.h"
#include "core/split.h"
#include "core/task.h"
#include "core/waits.h"
#include "core/power.h"
#include "nvrtc/chunk_wrap.h"
#include "core/phases.h"
#include "nvrtc/signature.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An explicit signature must describe the kernel the source declares: a wrong count or type
 * would pass garbage to the device (NVRTC cannot see the signature). Where the declaration
 * cannot be read (macros), the signature is taken at its word. */
static pg_status check_against_source(const char *source, const char *name,
                                      const pg_param_info *sig, int n) {
    pg_param_info *src = NULL;
    int m = 0;
    if (pg__signature_infer(source, name, &src, &m) != PG_OK) {
        pg__error_clear(); /* expected where macros hide the declaration: nothing to compare */
        return PG_OK;
    }
    pg_status st = PG_OK;
    if (m != n)
        st =
            pg__error(PG_ERROR_ARGUMENT,
                      "the signature of kernel '%s' has %d parameter(s) but its source declares %d",
                      name, n, m);
    for (int i = 0; !st && i < n; i++)
        if (sig[i].is_array != src[i].is_array || sig[i].dtype != src[i].dtype)
            st = pg__error(PG_ERROR_ARGUMENT,
                           "parameter %d of kernel '%s': the signature says '%s' but the source "
                           "declares '%s'",
                           i + 1, name, sig[i].type, src[i].type);
    pg__free(src);
    return st;
}

static pg_status new_kernel(pg__runtime *rt, const char *source, const char *name,
                            const char *signature, const char *options, uint32_t where,
                            unsigned classes, pg_kernel **out);

pg_status pg_kernel_new(pg_runtime *rth, const char *source, const char *name,
                        const char *signature, const char *options, pg_kernel **out) {
    return pg_kernel_new_where(rth, source, name, signature, options, NULL, out);
}

/* The devices of rt that `where` allows (a mask; 0 with an error when none, naming those there
 * are), and the classes to build for. Under the lock. */
static pg_status where_devices(const pg__runtime *rt, const char *name, const char *where,
                               uint32_t *mask, unsigned *classes) {
    int cls;
    if (!where || !strcmp(where, "any")) {
        *mask = 0;
        *classes = 0;
        return PG_OK;
    } else if (!strcmp(where, "gpu"))
        cls = PG_CLASS_GPU;
    else if (!strcmp(where, "cpu"))
        cls = PG_CLASS_CPU;
    else
        return pg__error(PG_ERROR_ARGUMENT,
                         "kernel '%s': where='%s' is not valid: expected any, gpu or cpu", name,
                         where);
    *mask = 0;
    *classes = 1u << cls;
    for (int d = 0; d < rt->ndev; d++)
        if (rt->dev[d].info.device_class == (pg_device_class)cls)
            *mask |= 1u << d;
    if (*mask)
        return PG_OK;
    char devs[1024] = "";
    size_t n = 0;
    for (int d = 0; d < rt->ndev && n < sizeof devs; d++)
        n += (size_t)snprintf(devs + n, sizeof devs - n, "%s%d (%s, %s)", d ? ", " : "", d,
                              rt->dev[d].info.device_class == PG_CLASS_GPU ? "GPU" : "CPU device",
                              rt->dev[d].info.name);
    return pg__error(PG_ERROR_ARGUMENT,
                     "kernel '%s': where=%s, but this runtime has no %s; its devices are %s", name,
                     where, cls == PG_CLASS_GPU ? "GPU" : "CPU device", devs);
}

pg_status pg_kernel_new_where(pg_runtime *rth, const char *source, const char *name,
                              const char *signature, const char *options, const char *where,
                              pg_kernel **out) {
    pg__error_clear();
    if (!source || !*source || !name || !*name || !out)
        return pg__error(PG_ERROR_ARGUMENT,
                         "pg_kernel_new: source, name and out are required (non-empty)");
    /* The runtime stays pinned through the compile (a close waits for it), but unlocked:
     * compiling takes long. */
    pg__runtime *rt;
    if (!pg__enter((uint64_t)(uintptr_t)rth, PG__H_RUNTIME, "pg_kernel_new", &rt))
        return PG_ERROR_STATE;
    uint32_t mask;
    unsigned classes;
    pg_status st = where_devices(rt, name, where, &mask, &classes);
    pg__unlock(rt);
    if (!st)
        st = new_kernel(rt, source, name, signature, options, mask, classes, out);
    pg__unpin(rt);
    return st;
}

static pg_status new_kernel(pg__runtime *rt, const char *source, const char *name,
                            const char *signature, const char *options, uint32_t where,
                            unsigned classes, pg_kernel **out) {
    pg_param_info *params = NULL;
    int n = 0;
    pg_status st = signature ? pg__signature_parse(signature, &params, &n)
                             : pg__signature_infer(source, name, &params, &n);
    if (st)
        return st;
    if (signature && (st = check_against_source(source, name, params, n))) {
        pg__free(params);
        return st;
    }
    if (n > PG__MAX_PARAMS) {
        pg__free(params);
        return pg__error(PG_ERROR_ARGUMENT,
                         "kernel '%s' has %d parameters; at most %d are supported", name, n,
                         PG__MAX_PARAMS);
    }
    pg__kernel *k = pg__calloc(1, sizeof *k);
    if (!k || !(k->name = pg__strdup(name))) {
        pg__free(k);
        pg__free(params);
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    k->rt = rt;
    k->refs = 1;
    k->params = params;
    k->nparams = n;
    k->where = where;
    pg__split_kernel_init(k);
    pg__kernel_src src = {source, name, options, params, n, rt->opt.cache_dir, classes};
    /* Chunked outputs: on GPUs the kernel is built inside a wrapper whose epilogue raises
     * per-chunk flags (nvrtc/chunk_wrap.c); CPU devices count blocks themselves. */
    char *wrapped = NULL, wname[192];
    for (int i = 0; i < n; i++)
        k->chunked |= params[i].chunk_per_thread > 0 && (params[i].access & PG_ACCESS_OUT);
    /* A kernel whose launches may be split is wrapped too where the backend runs a range of
     * blocks through the wrapper (core/split.c). */
    int range = k->splittable && rt->ops->launch_range && rt->ops->range_wrapper;
    if ((k->chunked && rt->ops->launch_chunks && rt->ops->chunk_epilogue) || range) {
        if (n + PG__CHUNK_EXTRA_PARAMS > PG__MAX_PARAMS)
            st = pg__error(PG_ERROR_ARGUMENT,
                           "kernel '%s' has declared block ranges and %d parameters; at most %d "
                           "are supported with them on this backend",
                           name, n, PG__MAX_PARAMS - PG__CHUNK_EXTRA_PARAMS);
        else
            st = pg__chunk_wrap_source(source, name, params, n, &wrapped, wname, sizeof wname);
        if (!st) {
            src.source = wrapped;
            src.name = wname;
            k->wrapped = 1;
        }
    }
    /* Compiling takes long: never under the runtime's lock. */
    if (!st)
        st = rt->ops->kernel_build(rt->b, &src, &k->image);
    pg__free(wrapped);
    if (st) {
        pg__free(k->name);
        pg__free(params);
        pg__free(k);
        return st;
    }
    st = pg__kernel_register(rt, k, out);
    if (st) {
        rt->ops->kernel_free(rt->b, k->image);
        pg__free(k->name);
        pg__free(params);
        pg__free(k);
    }
    return st;
}

/* A task (core/task.c) is a kernel of C functions: made here, beside pg_kernel_new, since
 * both list the kernel in the runtime (pg__kernel_register). */
pg_status pg_task_new(pg_runtime *rth, const char *name, const pg_task_impls *impls,
                      const char *signature, pg_kernel **out) {
    pg__error_clear();
    if (!name || !*name || !impls || !signature || !out)
        return pg__error(PG_ERROR_ARGUMENT,
                         "pg_task_new: name (non-empty), impls, signature and out are required");
    if (!impls->cpu && !impls->cuda)
        return pg__error(PG_ERROR_ARGUMENT,
                         "pg_task_new: task '%s' has no implementation (impls->cpu and "
                         "impls->cuda are both NULL)",
                         name);
    pg__runtime *rt;
    if (!pg__enter((uint64_t)(uintptr_t)rth, PG__H_RUNTIME, "pg_task_new", &rt))
        return PG_ERROR_STATE;
    int can_call = rt->ops->call != NULL;
    const char *backend = rt->ops->name;
    pg__unlock(rt);
    pg_status st = PG_OK;
    pg_param_info *params = NULL;
    int n = 0;
    if (!can_call)
        st = pg__error(PG_ERROR_ARGUMENT,
                       "task '%s': the %s backend cannot run C functions in stream order, so "
                       "tasks are not supported on its devices (use host: or cuda: devices)",
                       name, backend);
    if (!st && (st = pg__signature_parse(signature, &params, &n)) != PG_OK)
        st = pg__error_wrap(st, "task '%s'", name);
    if (!st && n > PG__MAX_PARAMS)
        st = pg__error(PG_ERROR_ARGUMENT, "task '%s' has %d parameters; at most %d are supported",
                       name, n, PG__MAX_PARAMS);
    pg__kernel *k = NULL;
    if (!st && (!(k = pg__calloc(1, sizeof *k)) || !(k->name = pg__strdup(name))))
        st = pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    if (!st) {
        k->rt = rt;
        k->refs = 1;
        k->params = params;
        k->nparams = n;
        k->is_task = 1;
        k->impls = *impls;
        st = pg__kernel_register(rt, k, out);
    }
    if (st) {
        if (k)
            pg__free(k->name);
        pg__free(k);
        pg__free(params);
    }
    pg__unpin(rt);
    return st;
}

pg_status pg__kernel_register(pg__runtime *rt, pg__kernel *k, pg_kernel **out) {
    pg_status st = PG_OK;
    pg__lock(rt);
    if (pg__closing_other(rt))
        st = pg__error(PG_ERROR_STATE, "pg_kernel_new: the runtime was closed during the compile");
    if (!st && rt->nkernels == rt->capkernels) {
        int cap = rt->capkernels ? rt->capkernels * 2 : 16;
        pg__kernel **nk = pg__realloc(rt->kernels, (size_t)cap * sizeof *nk);
        if (!nk)
            st = pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
        else {
            rt->kernels = nk;
            rt->capkernels = cap;
        }
    }
    if (!st && !(k->handle = pg__handle_new(PG__H_KERNEL, k, rt)))
        st = pg__error(PG_ERROR_OUT_OF_MEMORY, "out of handles");
    if (st) {
        pg__unlock(rt);
        return st;
    }
    k->live_index = rt->nkernels;
    rt->kernels[rt->nkernels++] = k;
    /* Read under the lock: once it is dropped, another thread closing the runtime frees k. */
    *out = (pg_kernel *)(uintptr_t)k->handle;
    pg__unlock(rt);
    return PG_OK;
}

void pg__kernel_unref(pg__kernel *k) {
    if (--k->refs > 0)
        return;
    if (k->is_task) {
        if (k->impls.ctx_free)
            k->impls.ctx_free(k->impls.ctx);
    } else {
        k->rt->ops->kernel_free(k->rt->b, k->image);
    }
    pg__free(k->params);
    pg__free(k->name);
    pg__free(k);
}

pg_status pg_kernel_free(pg_kernel *h) {
    pg__error_clear();
    pg__kernel *k = pg__enter_kernel(h, "pg_kernel_free");
    if (!k)
        return PG_ERROR_STATE;
    pg__runtime *rt = k->rt;
    pg__handle_release(k->handle);
    pg__kernel *last = rt->kernels[--rt->nkernels];
    rt->kernels[k->live_index] = last;
    last->live_index = k->live_index;
    pg__kernel_unref(k);
    pg__leave(rt);
    return PG_OK;
}

pg_status pg_kernel_params(pg_kernel *h, pg_param_info *out, int capacity, int *count) {
    pg__error_clear();
    if (!count || (capacity > 0 && !out))
        return pg__error(PG_ERROR_ARGUMENT, "pg_kernel_params: count (and out) must not be NULL");
    pg__kernel *k = pg__enter_kernel(h, "pg_kernel_params");
    if (!k)
        return PG_ERROR_STATE;
    for (int i = 0; i < k->nparams && i < capacity; i++)
        out[i] = k->params[i];
    *count = k->nparams;
    pg__leave(k->rt);
    return PG_OK;
}

/* Convert a scalar argument to the parameter's type, checking that the value fits: the rules of
 * pg_element_store, but no floating-point value for an integer parameter, even an integral one. */
static pg_status convert_scalar(const pg__kernel *k, int i, const pg_arg *a, uint64_t *slot) {
    const pg_param_info *p = &k->params[i];
    const char *pname = p->name[0] ? p->name : "?";
    if ((unsigned)a->dtype >= PG_DTYPE_COUNT)
        return pg__error(PG_ERROR_ARGUMENT, "kernel '%s' parameter %d (%s): bad scalar dtype %d",
                         k->name, i + 1, pname, (int)a->dtype);
    int from_float = a->dtype == PG_FLOAT32 || a->dtype == PG_FLOAT64;
    if (from_float && p->dtype != PG_FLOAT32 && p->dtype != PG_FLOAT64)
        return pg__error(PG_ERROR_ARGUMENT,
                         "kernel '%s' parameter %d (%s): expected an integer (%s), got the "
                         "floating-point value %g",
                         k->name, i + 1, pname, pg_dtype_name(p->dtype), a->v.f);
    *slot = 0; /* the element sits at the slot's address, as the kernel reads it */
    if (pg_element_store(p->dtype, *a, slot) == PG_OK)
        return PG_OK;
    char why[256];
    snprintf(why, sizeof why, "%s", pg_last_error());
    return pg__error(PG_ERROR_ARGUMENT, "kernel '%s' parameter %d (%s): %s", k->name, i + 1, pname,
                     why);
}

/* The shape's own rules here; what each device allows in pg__limits_fit (*fits: where it may go).
 */
static pg_status check_dims(const pg__kernel *k, pg_dim3 grid, pg_dim3 block, size_t shared,
                            uint32_t *fits) {
    if (!grid.x || !grid.y || !grid.z || !block.x || !block.y || !block.z)
        return pg__error(PG_ERROR_ARGUMENT,
                         "kernel '%s': grid (%u, %u, %u) and block (%u, %u, %u) must be at least 1 "
                         "in every dimension",
                         k->name, grid.x, grid.y, grid.z, block.x, block.y, block.z);
    return pg__limits_fit(k->rt, k->name, grid, block, shared, fits);
}

/* Fill c's arrays (deduplicated, accesses merged), slots and slot map from the arguments. */
static pg_status bind_args(pg__runtime *rt, pg__kernel *k, const pg_arg *args, int nargs,
                           pg__comp *c) {
    if (nargs != k->nparams) {
        char list[512] = "";
        for (int i = 0; i < k->nparams; i++) {
            size_t len = strlen(list);
            snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "",
                     k->params[i].name[0] ? k->params[i].name : "?");
        }
        return pg__error(PG_ERROR_ARGUMENT, "kernel '%s' takes %d argument%s (%s), %d given",
                         k->name, k->nparams, k->nparams == 1 ? "" : "s", list, nargs);
    }
    if (nargs && !args)
        return pg__error(PG_ERROR_ARGUMENT, "kernel '%s': args is NULL", k->name);
    pg_status room = pg__comp_storage(c, k->is_task ? 2 * nargs : nargs);
    if (room)
        return room;
    c->nslots = nargs;
    for (int i = 0; i < nargs; i++) {
        const pg_param_info *p = &k->params[i];
        const char *pname = p->name[0] ? p->name : "?";
        c->slot_arg[i] = -1;
        if (k->is_task)
            c->slots[nargs + i] = 0; /* a scalar's count; an array's below */
        if (!p->is_array) {
            if (args[i].kind != PG_ARG_SCALAR)
                return pg__error(
                    PG_ERROR_ARGUMENT,
                    "kernel '%s' parameter %d (%s): expected a %s scalar, got an array", k->name,
                    i + 1, pname, pg_dtype_name(p->dtype));
            pg_status st = convert_scalar(k, i, &args[i], &c->slots[i]);
            if (st)
                return st;
            continue;
        }
        if (args[i].kind != PG_ARG_ARRAY)
            return pg__error(PG_ERROR_ARGUMENT,
                             "kernel '%s' parameter %d (%s): expected an array of %s (%s), got a "
                             "scalar",
                             k->name, i + 1, pname, pg_dtype_name(p->dtype), p->type);
        int foreign = 0;
        pg__array *a =
            pg__handle_get_owned((uint64_t)(uintptr_t)args[i].v.array, PG__H_ARRAY, rt, &foreign);
        if (!a && !foreign)
            return pg__error(PG_ERROR_STATE,
                             "kernel '%s' parameter %d (%s): the array is invalid or was freed",
                             k->name, i + 1, pname);
        if (!a)
            return pg__error(PG_ERROR_ARGUMENT,
                             "kernel '%s' parameter %d (%s): the array belongs to another runtime",
                             k->name, i + 1, pname);
        if (a->dtype != p->dtype)
            return pg__error(PG_ERROR_ARGUMENT,
                             "kernel '%s' parameter %d (%s): expected an array of %s (%s), got an "
                             "array of %s",
                             k->name, i + 1, pname, pg_dtype_name(p->dtype), p->type,
                             pg_dtype_name(a->dtype));
        if (k->is_task)
            c->slots[nargs + i] = a->size;
        int j = 0;
        while (j < c->nargs && c->args[j].array != a)
            j++;
        if (j == c->nargs) {
            c->args[j].array = a;
            c->args[j].access = p->access;
            c->nargs++;
        } else {
            c->args[j].access |= p->access;
        }
        c->slot_arg[i] = (int8_t)j;
    }
    return PG_OK;
}

/* Whether bound launch c runs on this rank (after pg__ranks_launch moved its inputs); 0 with
 * *st set: it does not (an error, or another rank runs it). */
__attribute__((noinline, cold)) static int ranks_here(pg__runtime *rt, pg__comp *c, pg_status *st) {
    int here = 0;
    *st = pg__ranks_launch(rt, c, &here);
    return !*st && here;
}

static pg_status launch(pg_kernel *h, pg_dim3 grid, pg_dim3 block, size_t shared_mem,
                        const pg_arg *args, int nargs, int only, int copy_inputs) {
    PG__PHASE_SET();
    pg__error_clear();
    pg__kernel *k = pg__enter_kernel(h, "pg_kernel_launch");
    if (!k)
        return PG_ERROR_STATE;
    pg__runtime *rt = k->rt;
    uint32_t fits = 0;
    pg_status st = k->is_task ? pg__task_fits(rt, k, &fits) /* grid and block are ignored */
                              : check_dims(k, grid, block, shared_mem, &fits);
    if (!st && k->where && !(fits &= k->where)) /* where=gpu / cpu: that class only */
        st = pg__error(PG_ERROR_ARGUMENT,
                       "kernel '%s': no device of the class its where= allows fits the launch "
                       "(grid, block or shared memory beyond their limits)",
                       k->name);
    if (!st)
        st = pg__power_fit(rt, k->name, &fits); /* only the devices a power budget allows */
    if (!st && only >= 0) {
        if (only >= rt->ndev || !(fits >> only & 1) || rt->dev[only].failed)
            st = pg__error(PG_ERROR_ARGUMENT, "kernel '%s' cannot run on device %d%s", k->name,
                           only, only < rt->ndev && rt->dev[only].failed ? " (it failed)" : "");
        fits &= 1u << only;
    }
    PG__PHASE_SHARED(PG__PH_ENTER);
    pg__comp *c = st ? NULL : pg__comp_new(rt, PG__KERNEL);
    if (!st && !c)
        st = pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    if (!st)
        st = bind_args(rt, k, args, nargs, c);
    if (st) {
        if (c) {
            c->nargs = 0; /* no references were taken yet */
            pg__comp_unref(rt, c);
        }
        pg__leave(rt);
        return st;
    }
    for (int i = 0; i < c->nargs; i++)
        pg__array_ref(c->args[i].array);
    k->refs++;
    c->kernel = k;
    c->grid = grid;
    c->block = block;
    c->shared_mem = shared_mem;
    c->fits = fits;
    c->copy_inputs = copy_inputs;
    PG__PHASE_SHARED(PG__PH_BIND);
    if (pg__graph_take(rt, c, &st)) { /* recorded, not run */
        pg__comp_unref(rt, c);
        pg__leave(rt);
        return st;
    }
    /* Several ranks (core/ranks.c): it may run on another one. Out of line and predicted
     * untaken, so that the single-process path keeps its code. */
    if (__builtin_expect(rt->ranks != NULL, 0) && !ranks_here(rt, c, &st)) {
        pg__comp_unref(rt, c);
        pg__leave(rt);
        return st;
    }
    int split = 0; /* one part per device (core/split.c), for kernels that say how */
    if (__builtin_expect(k->splittable, 0))
        st = pg__split_submit(rt, c, &split);
    if (!st && !split)
        st = pg__exec_submit(rt, c);
    if (!st && !split && rt->opt.sync)
        st = pg__wait_comp(rt, c);
    PG__PHASE_SHARED(PG__PH_BOOKKEEP);
    pg__comp_unref(rt, c);
    pg__leave(rt);
    PG__PHASE_SHARED(PG__PH_LEAVE);
    PG__PHASE_LAUNCH_DONE();
    return st;
}

pg_status pg_kernel_launch(pg_kernel *h, pg_dim3 grid, pg_dim3 block, size_t shared_mem,
                           const pg_arg *args, int nargs) {
    return launch(h, grid, block, shared_mem, args, nargs, -1, 0);
}

pg_status pg_kernel_launch_on(pg_kernel *h, int device, pg_dim3 grid, pg_dim3 block,
                              size_t shared_mem, const pg_arg *args, int nargs, unsigned flags) {
    if (device < -1 || (flags & ~PG_LAUNCH_PREFETCH)) {
        pg__error_clear();
        return pg__error(PG_ERROR_ARGUMENT,
                         "pg_kernel_launch_on: %s (device: -1 for any, else 0 or more; flags: "
                         "PG_LAUNCH_PREFETCH or 0)",
                         device < -1 ? "no device below -1" : "unknown flags");
    }
    return launch(h, grid, block, shared_mem, args, nargs, device,
                  (flags & PG_LAUNCH_PREFETCH) != 0);
}
