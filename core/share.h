/* share.h: core's side of sharing the node with other processes (issue 39; node/node.h holds
 * the shared state). The hooks the launch path calls are inline and cost a branch when the
 * runtime does not share, and two relaxed stores into its own slot when it does. */
#ifndef PG_CORE_SHARE_H
#define PG_CORE_SHARE_H

#include "core/objects.h"
#include "node/node.h"

/* Join the node at pg_runtime_new (option share); a failure to join is logged and the runtime
 * schedules alone. */
void pg__share_open(pg__runtime *rt);
void pg__share_close(pg__runtime *rt);

/* dev's work in flight and backlog changed (issue, completion). */
static inline void pg__share_load(pg__runtime *rt, int dev) {
    if (rt->node)
        pg__node_publish_load(rt->node, dev, rt->dev[dev].inflight, rt->dev[dev].backlog_ns);
}

/* dev's bytes held changed (rt->stats.device_bytes). */
static inline void pg__share_bytes(pg__runtime *rt, int dev) {
    if (rt->node)
        pg__node_publish_bytes(rt->node, dev, rt->stats.device_bytes[dev]);
}

/* The policy view gets the other clients' load added (core/place.c): their backlog, work in
 * flight, and one busy stream per other client with work there. */
void pg__share_view_others(pg__runtime *rt, pg_policy_device *devs);
static inline void pg__share_view(pg__runtime *rt, pg_policy_device *devs) {
    if (rt->node && !pg__node_alone(rt->node))
        pg__share_view_others(rt, devs);
}

/* The candidates where c's arguments fit beside the other processes' memory (all of them when
 * none does: admission then waits on the device chosen), so that a call goes to a device with
 * room rather than wait for one without (core/place.c). */
uint32_t pg__share_room_others(pg__runtime *rt, const pg__comp *c, uint32_t candidates);
static inline uint32_t pg__share_room(pg__runtime *rt, const pg__comp *c, uint32_t candidates) {
    return rt->node && !pg__node_alone(rt->node) ? pg__share_room_others(rt, c, candidates)
                                                 : candidates;
}

/* PG_NODE_HOMES=1 at a runtime's join: placement keeps to homes (below). Off by default: on 2 x
 * H200 (2026-11-28, MCL's Fig. 8, 4 processes) homes made the shared node 0.70-0.99x static
 * pinning and slower than every process spreading over both GPUs with sharing off in 4 of 5
 * mixes (benchmarks/results/2026-11-28-h200x2-node-homes): a freed GPU is taken only when
 * every process on it has left, and homes follow join order. */
extern _Atomic int pg__share_homes;

/* The candidates this runtime keeps to beside other busy processes (core/place.c), where
 * homes are on: its home device and the devices no other busy client calls home
 * (node/node.h), unless that leaves none (processes time-share a GPU without MPS, so 4
 * processes each spreading over 2 GPUs put 4 contexts on each where pinning puts 2). */
static inline uint32_t pg__share_home(pg__runtime *rt, uint32_t candidates) {
    if (!rt->node || !atomic_load_explicit(&pg__share_homes, memory_order_relaxed) ||
        pg__node_alone(rt->node))
        return candidates;
    uint32_t m = candidates & pg__node_home_mask(rt->node);
    return m ? m : candidates;
}

/* Admission (core/evict.c pg__evict_reserve): a call whose arguments take `total` bytes on dev,
 * `need` of them not there yet. *target (the bytes this runtime may hold there before its
 * allocation) is lowered to make room beside the other processes' memory; when even all of it
 * would not do, the call waits for them (first come, first served, the lock dropped) and
 * *again is set; a call that could never fit fails at once naming the sizes. */
pg_status pg__share_admit(pg__runtime *rt, const char *what, int dev, uint64_t total, uint64_t need,
                          uint64_t *target, int *again);

#endif
