/* share.c: a runtime as a client of the node (core/share.h; the shared state: node/node.c). */
#include "core/share.h"
#include "core/util.h"
#include "core/waits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t lang_mu = PTHREAD_MUTEX_INITIALIZER;
static char language[16] = "c";

void pg_node_language_set(const char *name) {
    pthread_mutex_lock(&lang_mu);
    snprintf(language, sizeof language, "%s", name && *name ? name : "c");
    pthread_mutex_unlock(&lang_mu);
}

_Atomic int pg__share_homes;

void pg__share_open(pg__runtime *rt) {
    if (!rt->opt.share)
        return;
    const char *h = getenv("PG_NODE_HOMES");
    atomic_store(&pg__share_homes, h && !strcmp(h, "1"));
    char keys[PG_MAX_DEVICES][64];
    const char *kp[PG_MAX_DEVICES];
    for (int d = 0; d < rt->ndev; d++) {
        const pg_device_info *i = &rt->dev[d].info;
        if (!strcmp(i->backend, "sim"))
            return; /* simulated devices in virtual time share nothing */
        /* The same device in every process: a GPU by its UUID (ordinals change with
         * CUDA_VISIBLE_DEVICES), a CPU device by its index among its backend's devices. */
        int idx = 0;
        for (int e = 0; e < d; e++)
            idx += !strcmp(rt->dev[e].info.backend, i->backend);
        if (i->uuid[0])
            snprintf(keys[d], sizeof keys[d], "%s", i->uuid);
        else
            snprintf(keys[d], sizeof keys[d], "%s:%d", i->backend, idx);
        kp[d] = keys[d];
    }
    char lang[16];
    pthread_mutex_lock(&lang_mu);
    memcpy(lang, language, sizeof lang);
    pthread_mutex_unlock(&lang_mu);
    pg__node *n = NULL;
    if (pg__node_join(lang, rt->ndev, kp, &n) != PG_OK) {
        /* Scheduling alone is what polygpu did before; say why once per process. */
        static _Atomic int said;
        if (!atomic_exchange(&said, 1))
            fprintf(stderr, "polygpu: not sharing the node with other processes: %s\n",
                    pg_last_error());
        pg__log(rt, 1, "share: %s; scheduling alone", pg_last_error());
        pg__error_clear();
        return;
    }
    rt->node = n;
}

void pg__share_close(pg__runtime *rt) {
    pg__node_leave(rt->node);
    rt->node = NULL;
}

void pg__share_view_others(pg__runtime *rt, pg_policy_device *devs) {
    uint64_t inflight[PG_MAX_DEVICES], backlog[PG_MAX_DEVICES];
    int clients[PG_MAX_DEVICES];
    pg__node_others(rt->node, inflight, backlog, clients);
    for (int d = 0; d < rt->ndev; d++) {
        devs[d].backlog_s += (double)backlog[d] * 1e-9;
        devs[d].inflight += inflight[d];
        devs[d].busy_streams += clients[d];
    }
}

uint32_t pg__share_room_others(pg__runtime *rt, const pg__comp *c, uint32_t candidates) {
    uint64_t others[PG_MAX_DEVICES], total = 0;
    pg__node_others_bytes(rt->node, others);
    const pg__array *seen[PG__MAX_PARAMS];
    int ns = 0;
    for (int i = 0; i < c->nargs; i++) { /* each root's buffer once */
        const pg__array *r = c->args[i].array->store;
        int j = 0;
        while (j < ns && seen[j] != r)
            j++;
        if (j == ns) {
            seen[ns++] = r;
            total += r->nbytes;
        }
    }
    uint64_t lim = rt->opt.device_memory_limit;
    uint32_t fit = 0;
    for (int d = 0; d < rt->ndev; d++) {
        uint64_t cap = lim ? lim : rt->dev[d].info.memory_bytes;
        if ((candidates >> d & 1) && (!cap || (total <= cap && others[d] <= cap - total)))
            fit |= 1u << d;
    }
    return fit ? fit : candidates;
}

typedef struct waiting {
    pg__node *n;
    int dev;
    uint64_t cap, total, last_ns;
} waiting;

static pg_status poll_room(void *ctx, int *done) {
    waiting *w = ctx;
    uint64_t t = pg__now_ns();
    *done = 0;
    if (t - w->last_ns < 1000000) /* the node's lock once a millisecond */
        return PG_OK;
    w->last_ns = t;
    return pg__node_wait_try(w->n, w->dev, w->cap, w->total, done);
}

pg_status pg__share_admit(pg__runtime *rt, const char *what, int dev, uint64_t total, uint64_t need,
                          uint64_t *target, int *again) {
    uint64_t lim = rt->opt.device_memory_limit;
    uint64_t cap = lim ? lim : rt->dev[dev].info.memory_bytes;
    if (!rt->node || !cap)
        return PG_OK;
    if (total > cap)
        return pg__error(PG_ERROR_OUT_OF_MEMORY,
                         "%s on device %d: its arguments need %llu bytes together, more than the "
                         "device's %llu bytes%s: it could never run there",
                         what, dev, (unsigned long long)total, (unsigned long long)cap,
                         lim ? " (device_memory_limit)" : "");
    uint64_t own = rt->stats.device_bytes[dev], others = 0;
    uint64_t keep = *target < own ? *target : own; /* what it holds after its own evictions */
    int r = pg__node_admit(rt->node, dev, cap, keep, need, &others);
    if (r > 0)
        return PG_OK;
    if (r == 0 && others + total <= cap) {
        /* Room beside the others once this runtime evicts some of its own copies (never the
         * call's arguments: total - need of them are there already). */
        if (cap - others - need < *target)
            *target = cap - others - need;
        return PG_OK;
    }
    /* Only the others' memory can make room: wait for it. */
    pg__log(rt, 1,
            "%s on device %d: %llu bytes wait for other processes (%llu held there by "
            "them, capacity %llu)",
            what, dev, (unsigned long long)total, (unsigned long long)others,
            (unsigned long long)cap);
    waiting w = {rt->node, dev, cap, total, 0};
    pg_status st = pg__wait_poll(rt, poll_room, &w);
    if (st) {
        pg__node_wait_cancel(rt->node);
        return st;
    }
    *again = 1;
    return PG_OK;
}

pg_status pg_node_status(char **json) {
    pg__error_clear();
    if (!json)
        return pg__error(PG_ERROR_ARGUMENT, "pg_node_status: json must not be NULL");
    return pg__node_status_json(json);
}
