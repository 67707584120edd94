/* sim_observe.c: causality of host waits with host time frozen (sim_observe.h). */
#include "devices/sim/sim_observe.h"
#include "base/alloc.h"

#include <string.h>

int pg__sim_obs_slot_new(pg__sim_observe *o) {
    for (int i = 0; i < o->nslots; i++) {
        if (!o->used[i]) {
            o->used[i] = 1;
            return i;
        }
    }
    if (o->nslots == o->cap) {
        int cap = o->cap ? o->cap * 2 : 32;
        uint64_t *s = pg__realloc(o->seq, (size_t)cap * sizeof *s);
        if (!s)
            return -1;
        o->seq = s;
        uint64_t *ob = pg__realloc(o->observed, (size_t)cap * sizeof *ob);
        if (!ob)
            return -1;
        o->observed = ob;
        unsigned char *u = pg__realloc(o->used, (size_t)cap);
        if (!u)
            return -1;
        o->used = u;
        o->cap = cap;
    }
    int i = o->nslots++;
    o->seq[i] = o->observed[i] = 0;
    o->used[i] = 1;
    return i;
}

void pg__sim_obs_slot_free(pg__sim_observe *o, int slot) {
    if (slot >= 0 && slot < o->nslots)
        o->used[slot] = 0;
}

void pg__sim_obs_close(pg__sim_observe *o) {
    pg__free(o->seq);
    pg__free(o->observed);
    pg__free(o->used);
    memset(o, 0, sizeof *o);
}

static int vc_set(pg__sim_vc *vc, int slot, uint64_t seq) {
    for (int i = 0; i < vc->n; i++) {
        if (vc->e[i].slot == slot) {
            if (seq > vc->e[i].seq)
                vc->e[i].seq = seq;
            return 0;
        }
    }
    if (vc->n == vc->cap) {
        int cap = vc->cap ? vc->cap * 2 : 4;
        pg__sim_vc_entry *e = pg__realloc(vc->e, (size_t)cap * sizeof *e);
        if (!e)
            return -1;
        vc->e = e;
        vc->cap = cap;
    }
    vc->e[vc->n++] = (pg__sim_vc_entry){slot, seq};
    return 0;
}

/* Drop the entries the host has seen: they add nothing. */
static void prune(const pg__sim_observe *o, pg__sim_vc *vc) {
    int k = 0;
    for (int i = 0; i < vc->n; i++)
        if (!pg__sim_obs_seen(o, vc->e[i].slot, vc->e[i].seq))
            vc->e[k++] = vc->e[i];
    vc->n = k;
}

int pg__sim_obs_enqueue(pg__sim_observe *o, int slot, pg__sim_vc *vc, uint64_t *seq) {
    prune(o, vc);
    if (vc_set(vc, slot, o->seq[slot] + 1))
        return -1;
    *seq = ++o->seq[slot];
    return 0;
}

uint64_t pg__sim_obs_last(const pg__sim_observe *o, int slot) {
    return o->seq[slot];
}

int pg__sim_vc_merge(const pg__sim_observe *o, pg__sim_vc *into, const pg__sim_vc *from) {
    prune(o, into);
    for (int i = 0; i < from->n; i++)
        if (!pg__sim_obs_seen(o, from->e[i].slot, from->e[i].seq) &&
            vc_set(into, from->e[i].slot, from->e[i].seq))
            return -1;
    return 0;
}

void pg__sim_vc_free(pg__sim_vc *vc) {
    pg__free(vc->e);
    memset(vc, 0, sizeof *vc);
}

void pg__sim_obs_saw(pg__sim_observe *o, const pg__sim_vc *vc) {
    for (int i = 0; i < vc->n; i++) {
        int s = vc->e[i].slot;
        if (s >= 0 && s < o->nslots && vc->e[i].seq > o->observed[s])
            o->observed[s] = vc->e[i].seq;
    }
}

int pg__sim_obs_seen(const pg__sim_observe *o, int slot, uint64_t seq) {
    return seq == 0 || (slot >= 0 && slot < o->nslots && seq <= o->observed[slot]);
}
