/* task.c: tasks — C functions (library calls) launched like kernels. A task is a pg__kernel
 * with no image and one function per device kind; it goes through binding, dependencies,
 * placement, coherence and issue as a kernel does (core/kernel.c, core/exec.c), except that
 * placement sees only the devices whose kind has a function, and the issue hands the backend a
 * call (backend op `call`) instead of a launch: on CPU devices a worker runs it in stream order,
 * on GPUs it runs at issue and enqueues onto the stream it is given. */
#include "core/task.h"
#include "nvrtc/signature.h"

#include <stdio.h>
#include <string.h>

pg_status pg_task_fail(pg_status s, const char *msg) {
    if (s == PG_OK)
        s = PG_ERROR_INTERNAL;
    return pg__error(s, "%s", msg ? msg : "the task failed");
}

static const char *class_name(pg_device_class c) {
    return c == PG_CLASS_CPU ? "CPU" : "CUDA";
}

/* A GPU-class device runs the CUDA implementation (given the native stream), a CPU device the
 * CPU one. */
static pg_task_fn impl_for(const pg__kernel *k, pg_device_class c) {
    return c == PG_CLASS_CPU ? k->impls.cpu : k->impls.cuda;
}

/* "CPU devices", "GPUs" or "GPUs and CPU devices": what this runtime has, for messages. */
static const char *devices_named(const pg__runtime *rt) {
    int cpu = 0, gpu = 0;
    for (int d = 0; d < rt->ndev; d++)
        *(rt->dev[d].info.device_class == PG_CLASS_CPU ? &cpu : &gpu) = 1;
    return cpu && gpu ? "GPUs and CPU devices" : cpu ? "CPU devices" : "GPUs";
}

pg_status pg__task_fits(const pg__runtime *rt, const pg__kernel *k, uint32_t *mask) {
    uint32_t m = 0;
    for (int d = 0; d < rt->ndev; d++)
        if (impl_for(k, rt->dev[d].info.device_class))
            m |= 1u << d;
    *mask = m;
    if (m)
        return PG_OK;
    return pg__error(PG_ERROR_ARGUMENT,
                     "task '%s' cannot run on any device of this runtime: it has %s%s%s, and the "
                     "devices are %s (placement considers only devices of a kind with an "
                     "implementation)",
                     k->name, k->impls.cpu ? "a CPU implementation" : "",
                     k->impls.cpu && k->impls.cuda ? " and " : "",
                     k->impls.cuda ? "a CUDA implementation" : "", devices_named(rt));
}

/* What the backend copies and the function receives: the call, then the slots and counts the
 * call points to (set again after the copy). */
typedef struct task_blob {
    pg_task_fn fn;
    pg_task_call call;
    uint64_t vals[2 * PG__MAX_PARAMS];
} task_blob;

static pg_status trampoline(void *arg) {
    task_blob *b = arg;
    b->call.args = b->vals;
    b->call.counts = b->vals + b->call.nargs;
    return b->fn(&b->call);
}

pg_status pg__task_issue(pg__runtime *rt, pg__comp *c, pg__stream *s) {
    const pg__kernel *k = c->kernel;
    pg_device_kind kind = rt->dev[s->device].info.kind;
    pg_device_class cls = rt->dev[s->device].info.device_class;
    task_blob b;
    memset(&b, 0, offsetof(task_blob, vals));
    b.fn = impl_for(k, cls);
    if (!b.fn) /* placement looks only where there is one */
        return pg__error(PG_ERROR_INTERNAL,
                         "task '%s' placed on a %s device, which it has no "
                         "implementation for",
                         k->name, class_name(cls));
    int n = c->nslots;
    b.call.name = k->name;
    b.call.device = s->device;
    b.call.kind = kind;
    b.call.stream =
        cls == PG_CLASS_CPU || !rt->ops->stream_handle ? 0 : rt->ops->stream_handle(rt->b, s->b);
    b.call.nargs = n;
    b.call.params = k->params;
    b.call.ctx = k->impls.ctx;
    memcpy(b.vals, c->slots, (size_t)(2 * n) * sizeof *b.vals);
    size_t bytes = offsetof(task_blob, vals) + (size_t)(2 * n) * sizeof *b.vals;
    pg_status st = rt->ops->call(rt->b, s->b, trampoline, &b, bytes, c->timed ? &c->timing : NULL);
    if (st && cls != PG_CLASS_CPU)
        return pg__error_wrap(st, "task '%s' on GPU %d", k->name, s->device);
    return st;
}
