/* engine.c: wires the engine's modules together where a lower one must reach a higher one. A
 * computation (core/comp.c, at the bottom: every module holds computations) references its
 * arguments and its kernel and learns when its work finished; what that means to the modules
 * above it — arrays and kernels freed, a faulted device, the record, the profile, the models,
 * power — it reaches through the hooks set here, so that calls go one way (the call-level layer
 * test, tests/layers/check_calls.py, keeps every call loop small). */
#include "core/engine.h"
#include "core/array.h"
#include "core/chunks.h"
#include "core/coherence.h"
#include "core/kernel.h"
#include "core/models.h"
#include "core/observe.h"
#include "core/profile.h"
#include "core/power.h"
#include "core/share.h"
#include "core/ranks.h"

/* Done, timing resolved when timed: what the record, the timing profile, the models and the
 * power figures learn from it. */
static void finished(pg__runtime *rt, pg__comp *c) {
    if (c->timed) {
        pg__dag_record_timing(rt, c);
        pg__profile_note(rt, c);
        pg__models_note(rt, c);
    }
    pg__power_note(rt, c); /* busy time (timing resolved), NVML samples */
}

/* No longer in its device's inflight count: its estimate leaves the device's queue, and the
 * node (when shared) sees the device's new load. */
static void left_device(pg__runtime *rt, pg__comp *c) {
    pg__models_queue_done(rt, c);
    if (c->device >= 0 && c->device < rt->ndev)
        pg__share_load(rt, c->device);
}

static const pg__comp_hooks comp_hooks = {
    .array_unref = pg__array_unref,
    .kernel_unref = pg__kernel_unref,
    .chunks_free = pg__chunks_free,
    .device_failed = pg__coh_device_failed,
    .finished = finished,
    .left_device = left_device,
    .ranks_wait = pg__ranks_wait,
    .ranks_busy = pg__ranks_busy,
    .ranks_quiesce = pg__ranks_quiesce,
};

void pg__engine_init(pg__runtime *rt) {
    rt->hooks = &comp_hooks;
}
