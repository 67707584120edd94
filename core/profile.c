/* profile.c: recording a kernel timing profile (option profile, PG_PROFILE): each finished
 * kernel's measured duration on its device, with its launch shape and the bytes of its array
 * arguments as the simulated devices count them (from each argument's first element to the end
 * of its array's buffer), kept in memory while the runtime runs and appended to the profile file
 * at pg_runtime_free as sample lines (devices/sim/sim_profile.h), from which a simulated machine
 * fits its duration models. Lock held. */
#include "core/profile.h"

#include "base/alloc.h"
#include "devices/registry.h"

#include <stdio.h>
#include <string.h>

enum { MAX_SAMPLES = 200000 }; /* a long run keeps its first ones: enough to fit a model */

struct pg__profile_sample {
    char kernel[64];
    int device;
    pg_dim3 grid, block;
    uint64_t arg_bytes, ns;
};

void pg__profile_note(pg__runtime *rt, const pg__comp *c) {
    if (!rt->opt.profile[0] || c->kind != PG__KERNEL || !c->kernel ||
        c->timing.end_ns <= c->timing.start_ns || rt->nprof >= MAX_SAMPLES)
        return;
    if (rt->nprof == rt->capprof) {
        int cap = rt->capprof ? 2 * rt->capprof : 256;
        pg__profile_sample *n = pg__realloc(rt->prof, (size_t)cap * sizeof *n);
        if (!n)
            return; /* a sample fewer: the profile is a measurement, not the program's state */
        rt->prof = n;
        rt->capprof = cap;
    }
    pg__profile_sample *s = &rt->prof[rt->nprof++];
    snprintf(s->kernel, sizeof s->kernel, "%s", c->kernel->name);
    s->device = c->device;
    s->grid = c->grid;
    s->block = c->block;
    s->arg_bytes = 0;
    for (int i = 0; i < c->nslots; i++)
        if (c->slot_arg[i] >= 0) {
            const pg__array *a = c->args[c->slot_arg[i]].array;
            s->arg_bytes += a->store->nbytes - a->off * pg_dtype_size(a->dtype);
        }
    s->ns = c->timing.end_ns - c->timing.start_ns;
}

pg_status pg__profile_write(pg__runtime *rt) {
    pg_status st = PG_OK;
    /* The format is the one a registered backend reads (simulated devices' profiles). */
    const pg__backend_entry *w = pg__registry_profile_writer();
    if (!w && rt->nprof)
        st = pg__error(PG_ERROR_UNSUPPORTED, "no registered backend reads timing profiles");
    for (int i = 0; !st && i < rt->nprof; i++) {
        const pg__profile_sample *s = &rt->prof[i];
        const char *dev =
            s->device >= 0 && s->device < rt->ndev ? rt->dev[s->device].info.name : "?";
        st = w->profile_append(rt->opt.profile, s->kernel, dev, s->grid, s->block, s->arg_bytes,
                               s->ns);
    }
    pg__free(rt->prof);
    rt->prof = NULL;
    rt->nprof = rt->capprof = 0;
    return st ? pg__error_wrap(st, "writing the timing profile '%s'", rt->opt.profile) : PG_OK;
}
