/* sim_routes.c: the route a copy takes between two locations of a simulated machine, and the
 * interconnect matrix it implies.
 *
 * Every simple path of at most PG__SIM_MAX_HOPS links whose inner nodes are the host or switches
 * (CUDA never forwards a copy through a third GPU: without a peer link it stages through host
 * memory) is tried; the best has the widest narrowest link, then the fewest hops, then the least
 * latency, then comes first in link order (so a file always gives the same routes). Machines
 * have a few dozen nodes and paths through switches only, so the search is small. */
#include "devices/sim/sim_topo.h"
#include "base/error.h"

#include <stdio.h>
#include <string.h>

/* Paths tried for all routes of a machine together (with the pruning of dfs): the presets need
 * at most about 5,300 (dgx2-v100, 17 locations); past this a file is refused rather than searched
 * for hours (the paths grow exponentially with parallel links and meshes of switches: a fuzzed file
 * of duplicated links took minutes). */
#define MAX_STEPS 200000L

typedef struct search {
    const pg__sim_topo *t;
    int dst;
    int on_path[PG__SIM_MAX_NODES];
    int link[PG__SIM_MAX_HOPS];
    pg__sim_route best;
    int found;
    long steps; /* of the whole machine; past MAX_STEPS the search stops */
    /* The links out of node n, in file order: out[first[n]] .. out[first[n + 1] - 1]. */
    const int *first, *out;
} search;

static int better(const pg__sim_route *a, const pg__sim_route *b) {
    if (a->gbps != b->gbps)
        return a->gbps > b->gbps;
    if (a->nhops != b->nhops)
        return a->nhops < b->nhops;
    return a->lat_us < b->lat_us;
}

static void dfs(search *s, int node, int hops, double gbps, double lat) {
    if (++s->steps > MAX_STEPS)
        return;
    /* A path no completion of which can be better than the best so far is not followed: the
     * narrowest link only narrows, hops and latency only grow (a path not at dst yet takes at
     * least one more hop). Only strictly better routes replace the best, so the route chosen
     * is the one the whole search would choose. */
    int min_hops = hops + (node != s->dst);
    if (s->found &&
        (gbps < s->best.gbps ||
         (gbps == s->best.gbps &&
          (min_hops > s->best.nhops || (min_hops == s->best.nhops && lat >= s->best.lat_us)))))
        return;
    if (node == s->dst) {
        pg__sim_route r = {.nhops = hops, .gbps = gbps, .lat_us = lat};
        memcpy(r.link, s->link, sizeof r.link);
        if (!s->found || better(&r, &s->best)) {
            s->best = r;
            s->found = 1;
        }
        return;
    }
    if (hops == PG__SIM_MAX_HOPS)
        return;
    /* A GPU other than the ends forwards nothing. */
    if (hops > 0 && node >= 1 && node < PG__SIM_FIRST_SWITCH)
        return;
    s->on_path[node] = 1;
    for (int k = s->first[node]; k < s->first[node + 1]; k++) {
        int i = s->out[k];
        const pg__sim_link *l = &s->t->link[i];
        if (s->on_path[l->to])
            continue;
        s->link[hops] = i;
        dfs(s, l->to, hops + 1, l->gbps < gbps ? l->gbps : gbps, lat + l->lat_us);
    }
    s->on_path[node] = 0;
}

const char *pg__sim_topo_node_name(const pg__sim_topo *t, int node, char *buf, size_t cap) {
    if (node == 0)
        snprintf(buf, cap, "host");
    else if (node < PG__SIM_FIRST_SWITCH)
        snprintf(buf, cap, "gpu%d", node - 1);
    else
        snprintf(buf, cap, "%s", t->switch_name[node - PG__SIM_FIRST_SWITCH]);
    return buf;
}

pg_status pg__sim_routes(pg__sim_topo *t, const char *path) {
    int nloc = t->ngpu + 1;
    long steps = 0;
    /* Each node's links, in file order (the order paths are tried in, which breaks ties). */
    int first[PG__SIM_MAX_NODES + 1] = {0}, out[PG__SIM_MAX_LINKS], at[PG__SIM_MAX_NODES];
    for (int i = 0; i < t->nlinks; i++)
        first[t->link[i].from + 1]++;
    for (int n = 0; n < PG__SIM_MAX_NODES; n++) {
        first[n + 1] += first[n];
        at[n] = first[n];
    }
    for (int i = 0; i < t->nlinks; i++)
        out[at[t->link[i].from]++] = i;
    for (int a = 0; a < nloc; a++) {
        for (int b = 0; b < nloc; b++) {
            pg__sim_route *r = &t->route[a][b];
            memset(r, 0, sizeof *r);
            if (a == b)
                continue; /* local: no links (memory bandwidth, sim_backend.c) */
            search s;
            memset(&s, 0, sizeof s);
            s.t = t;
            s.dst = b;
            s.steps = steps;
            s.first = first;
            s.out = out;
            dfs(&s, a, 0, 1e300, 0.0);
            steps = s.steps;
            if (steps > MAX_STEPS) {
                char x[32], y[32];
                return pg__error(PG_ERROR_ARGUMENT,
                                 "%s: too many paths to search for the routes (at %s to %s, "
                                 "more than %ld tried): remove duplicate links, or connect "
                                 "switches less densely",
                                 path, pg__sim_topo_node_name(t, a, x, sizeof x),
                                 pg__sim_topo_node_name(t, b, y, sizeof y), MAX_STEPS);
            }
            if (!s.found) {
                char x[32], y[32];
                return pg__error(PG_ERROR_ARGUMENT,
                                 "%s: no route from %s to %s (through the host and switches, at "
                                 "most %d links): add a link",
                                 path, pg__sim_topo_node_name(t, a, x, sizeof x),
                                 pg__sim_topo_node_name(t, b, y, sizeof y), PG__SIM_MAX_HOPS);
            }
            *r = s.best;
        }
    }
    return PG_OK;
}

void pg__sim_topo_matrix(const pg__sim_topo *t, pg__interconnect *m) {
    pg__interconnect_default(m, t->ngpu, 1.0, 1.0);
    for (int a = 0; a < m->nloc; a++) {
        for (int b = 0; b < m->nloc; b++) {
            if (a == b)
                continue;
            m->bw[a * m->nloc + b] = t->route[a][b].gbps;
            m->lat_us[a * m->nloc + b] = t->route[a][b].lat_us;
        }
    }
}
