/* fuzz_topology.c: fuzz harness of the topology files of simulated machines (sim:FILE.topo):
 * pg__sim_topo_load reads the text (sim_text.c's lines and words, sim_topo.c's statements) and
 * computes every route (sim_routes.c); then the matrix the policies see. Input: the file's
 * text, written to an in-memory file that the reader opens by path as it opens a real one. */
#include "devices/sim/sim_topo.h"
#include "tests/fuzz/fuzz.h"

#include <math.h>
#include <sys/mman.h>
#include <unistd.h>

/* A machine that was accepted is well formed: counts in range, links between nodes that exist,
 * a route between every two locations made of links that exist and end where they should. */
static void check_topo(const pg__sim_topo *t) {
    FUZZ_ASSERT(t->ngpu >= 1 && t->ngpu <= PG_MAX_DEVICES);
    FUZZ_ASSERT(t->nswitch >= 0 && t->nswitch <= PG__SIM_MAX_SWITCHES);
    FUZZ_ASSERT(t->nlinks >= 0 && t->nlinks <= PG__SIM_MAX_LINKS);
    FUZZ_ASSERT(t->nduplex >= 0 && t->nduplex <= PG__SIM_MAX_LINKS / 2);
    FUZZ_ASSERT(memchr(t->name, '\0', sizeof t->name) && t->name[0]);
    int nodes = PG__SIM_FIRST_SWITCH + t->nswitch;
    for (int i = 0; i < t->nlinks; i++) {
        const pg__sim_link *l = &t->link[i];
        FUZZ_ASSERT(l->from >= 0 && l->from < nodes && l->to >= 0 && l->to < nodes);
        /* Nodes 1..ngpu are the GPUs; those past them up to the first switch do not exist. */
        FUZZ_ASSERT(l->from <= t->ngpu || l->from >= PG__SIM_FIRST_SWITCH);
        FUZZ_ASSERT(l->to <= t->ngpu || l->to >= PG__SIM_FIRST_SWITCH);
        FUZZ_ASSERT(l->from != l->to);
        FUZZ_ASSERT(l->gbps > 0 && l->lat_us >= 0);
        FUZZ_ASSERT(l->duplex >= -1 && l->duplex < t->nduplex);
    }
    for (int d = 0; d < t->ngpu; d++)
        FUZZ_ASSERT(memchr(t->gpu[d].info.name, '\0', sizeof t->gpu[d].info.name));
    for (int a = 0; a <= t->ngpu; a++) {
        for (int b = 0; b <= t->ngpu; b++) {
            const pg__sim_route *r = &t->route[a][b];
            FUZZ_ASSERT(r->nhops >= 0 && r->nhops <= PG__SIM_MAX_HOPS);
            FUZZ_ASSERT(a == b ? r->nhops == 0 : r->nhops >= 1);
            int at = a;
            for (int h = 0; h < r->nhops; h++) {
                FUZZ_ASSERT(r->link[h] >= 0 && r->link[h] < t->nlinks);
                FUZZ_ASSERT(t->link[r->link[h]].from == at);
                at = t->link[r->link[h]].to;
            }
            FUZZ_ASSERT(at == b);
        }
    }
    pg__interconnect *m = malloc(sizeof *m);
    if (m) {
        pg__sim_topo_matrix(t, m);
        FUZZ_ASSERT(m->nloc == t->ngpu + 1);
        free(m);
    }
    char buf[40];
    for (int node = 0; node < nodes; node++)
        FUZZ_ASSERT(pg__sim_topo_node_name(t, node, buf, sizeof buf)[0] != '\0');
}

int pg_fuzz_topology(const uint8_t *data, size_t size) {
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("fuzz.topo", MFD_CLOEXEC);
        if (fd < 0) {
            perror("memfd_create");
            abort();
        }
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size)) {
        perror("fuzz_topology: writing the input");
        abort();
    }
    pg__sim_topo *t = malloc(sizeof *t);
    if (!t)
        return 0;
    pg_status st = pg__sim_topo_load(path, t);
    if (st == PG_OK)
        check_topo(t);
    else
        pg_fuzz_check_error(st);
    free(t);
    return 0;
}
