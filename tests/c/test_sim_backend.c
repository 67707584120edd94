/* test_sim_backend.c: the simulated devices' backend through its ops table, in virtual time —
 * copy durations over routes, contention on shared links and none on separate ones, copy
 * engines one copy at a time, duplex and host DMA limits, routes through the host, kernels
 * sharing a GPU by what they use of it, launch latency, stream waits, events and host waits
 * moving the clock, graphs launched as one operation (edges between GPUs costing graph_edge_us),
 * real host time counting (or frozen),
 * device memory capacity; topology and profile files (fits, the recording's offset, the sample
 * writer, errors naming file and line). */
#include "check.h"
#include "devices/sim/sim_backend.h"
#include "devices/sim/sim_profile.h"
#include "devices/sim/sim_topo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const pg__backend_ops *ops;
static void write_file(const char *path, const char *text);
static void bad_topo(const char *text, const char *needle);
static pg__backend *b;
static int ndev;
static char tmpdir[256];

/* Timing only unless the spec says otherwise: these tests hand the backend addresses that are
 * no memory (compute=cpu, the default, would copy through them). */
static void open_sim(const char *spec) {
    char full[1400];
    snprintf(full, sizeof full, "%s%s", spec, strstr(spec, "compute=") ? "" : ",compute=none");
    REQUIRE_OK(pg__sim_backend_open(full, 1, &ops, &b, &ndev));
}

static pg__bstream *stream(int dev) {
    pg__bstream *s = NULL;
    REQUIRE_OK(ops->stream_new(b, dev, &s));
    return s;
}

static void *dev_buf(int dev, size_t bytes) {
    void *p = NULL;
    REQUIRE_OK(ops->dev_alloc(b, dev, bytes, NULL, &p));
    return p;
}

static pg__bevent *record(pg__bstream *s) {
    pg__bevent *e = NULL;
    REQUIRE_OK(ops->event_record(b, s, &e));
    return e;
}

/* Wait for s's work; the clock then stands at its end. */
static void drain(pg__bstream *s) {
    pg__bevent *e = record(s);
    CHECK_OK(ops->event_wait(b, e));
    ops->event_free(b, e);
}

static void times(pg__timing *t, double *start, double *end) {
    ops->timing_resolve(b, t);
    *start = (double)t->start_ns;
    *end = (double)t->end_ns;
    ops->timing_release(b, t);
}

static double dur_ns(pg__timing *t) {
    double s, e;
    times(t, &s, &e);
    return e - s;
}

static int near(double a, double want, double rel) {
    return fabs(a - want) <= rel * want + 2; /* times are rounded to whole ns */
}

/* A copy to `dst` from `src` (a device or PG_HOST) of `bytes` on s. Device buffers are addresses
 * only (timing-only runs never touch them); host ends are a small real buffer, copied from only
 * when both ends are the host. */
static void copy(pg__bstream *s, int dst, int src, size_t bytes, pg__timing *t) {
    static char host_a[64], host_b[64];
    void *d = dst == PG_HOST ? (void *)host_a : dev_buf(dst, bytes);
    void *sp = src == PG_HOST ? (void *)host_b : dev_buf(src, bytes);
    REQUIRE_OK(ops->copy(b, s, dst, d, src, sp, bytes, t));
    if (dst != PG_HOST)
        ops->dev_free(b, dst, d);
    if (src != PG_HOST)
        ops->dev_free(b, src, sp);
}

enum { MB240 = 240000000, MB120 = 120000000 };

static void test_copies(void) {
    open_sim("pcie-4gpu,host_time=0");
    CHECK(ndev == 4);
    pg__bstream *s0 = stream(0), *s0b = stream(0), *s1 = stream(1), *s2 = stream(2);
    pg__timing t1 = {0}, t2 = {0};
    /* host -> gpu0: host->sw0->gpu0, 24 GB/s each way, 0.6 us a hop. */
    copy(s0, 0, PG_HOST, MB240, &t1);
    drain(s0);
    double one = dur_ns(&t1);
    CHECK(near(one, 1200 + MB240 / 24.0, 1e-9));
    /* Two at once into one GPU: its copy engine runs them one after the other (first come,
     * first served), each as fast as alone. */
    copy(s0, 0, PG_HOST, MB240, &t1);
    copy(s0b, 0, PG_HOST, MB240, &t2);
    drain(s0);
    drain(s0b);
    double a0, a1, c0, c1;
    times(&t1, &a0, &a1);
    times(&t2, &c0, &c1);
    CHECK(near(a1 - a0, one, 1e-9) && near(c1 - c0, one, 1e-9) && near(c0, a1, 1e-12));
    /* Into gpu0 and gpu2, behind different switches: separate links, each as fast as alone. */
    copy(s0, 0, PG_HOST, MB240, &t1);
    copy(s2, 2, PG_HOST, MB240, &t2);
    drain(s0);
    drain(s2);
    CHECK(near(dur_ns(&t1), one, 1e-9) && near(dur_ns(&t2), one, 1e-9));
    /* Into gpu0 and gpu1, one switch: its uplink host->sw0 is shared. */
    copy(s0, 0, PG_HOST, MB240, &t1);
    copy(s1, 1, PG_HOST, MB240, &t2);
    drain(s0);
    drain(s1);
    CHECK(near(dur_ns(&t1), 2 * one, 0.01) && near(dur_ns(&t2), 2 * one, 0.01));
    /* Opposite directions of a link do not compete (host->gpu0 against gpu0->host). */
    copy(s0, 0, PG_HOST, MB240, &t1);
    copy(s0b, PG_HOST, 0, MB240, &t2);
    drain(s0);
    drain(s0b);
    CHECK(near(dur_ns(&t1), one, 1e-9) && near(dur_ns(&t2), one, 1e-9));
    /* Peers: gpu0->gpu1 stays in sw0 (2 hops); gpu0->gpu2 crosses the root complex, the host
     * node (4 hops), and so shares host->sw1 with a copy host->gpu3. */
    copy(s1, 1, 0, MB240, &t1);
    drain(s1);
    CHECK(near(dur_ns(&t1), 1200 + MB240 / 24.0, 1e-9));
    copy(s2, 2, 0, MB240, &t1);
    drain(s2);
    CHECK(near(dur_ns(&t1), 2400 + MB240 / 24.0, 1e-9));
    copy(s2, 2, 0, MB240, &t1);
    copy(s0b, 3, PG_HOST, MB240, &t2);
    drain(s2);
    drain(s0b);
    CHECK(near(dur_ns(&t1), 2 * one, 0.01) && near(dur_ns(&t2), 2 * one, 0.01));
    /* A copy within a GPU reads and writes its memory: 2 x bytes at 1555 GB/s. */
    copy(s0, 0, 0, MB240, &t1);
    drain(s0);
    CHECK(near(dur_ns(&t1), 2.0 * MB240 / 1555.0, 1e-9));
    ops->stream_free(b, s0);
    ops->stream_free(b, s0b);
    ops->stream_free(b, s1);
    ops->stream_free(b, s2);
    ops->close(b);
}

/* dgx1-v100: GPUs without an NVLink between them copy through host memory. */
static void test_routes(void) {
    char path[1200];
    REQUIRE_OK(pg__sim_topo_find("dgx1-v100", path, sizeof path));
    static pg__sim_topo t;
    REQUIRE_OK(pg__sim_topo_load(path, &t));
    CHECK(t.ngpu == 8 && !strcmp(t.gpu[0].info.name, "Tesla V100-SXM2-32GB"));
    const pg__sim_route *r05 = &t.route[1][6], *r04 = &t.route[1][5], *r03 = &t.route[1][4];
    CHECK(r04->nhops == 1 && r04->gbps == 48 && r03->nhops == 1 && r03->gbps == 48);
    CHECK(t.route[1][2].nhops == 1 && t.route[1][2].gbps == 24); /* 0-1: one NVLink */
    /* gpu0 -> plx0 -> host -> cpu1 -> plx2 -> gpu5 */
    CHECK(r05->nhops == 5 && r05->gbps == 12);
    int via_host = 0;
    for (int i = 0; i < r05->nhops; i++)
        via_host |= t.link[r05->link[i]].to == 0;
    CHECK(via_host);
    pg__interconnect m;
    pg__sim_topo_matrix(&t, &m);
    CHECK(m.nloc == 9 && m.bw[1 * 9 + 6] == 12 && m.bw[1 * 9 + 5] == 48 && m.bw[0 * 9 + 1] == 12);
    CHECK(fabs(m.lat_us[1 * 9 + 6] - 2.5) < 1e-9);

    open_sim("dgx1-v100,host_time=0");
    pg__bstream *s5 = stream(5), *s4 = stream(4), *s0 = stream(0);
    pg__timing t1 = {0}, t2 = {0};
    copy(s5, 5, 0, MB120, &t1);
    drain(s5);
    double alone = dur_ns(&t1);
    CHECK(near(alone, 2500 + MB120 / 12.0, 1e-9));
    copy(s4, 4, 0, MB120, &t1); /* NV2 */
    drain(s4);
    CHECK(near(dur_ns(&t1), 1000 + MB120 / 48.0, 1e-9));
    /* The staged copy shares gpu0 -> plx0 -> host with gpu0's copy to the host. */
    copy(s5, 5, 0, MB120, &t1);
    copy(s0, PG_HOST, 0, MB120, &t2);
    drain(s5);
    drain(s0);
    CHECK(near(dur_ns(&t1), 2 * alone, 0.01) && near(dur_ns(&t2), 2 * alone, 0.01));
    ops->stream_free(b, s0);
    ops->stream_free(b, s4);
    ops->stream_free(b, s5);
    ops->close(b);
}

static void *kernel_fn(const char *name, int dev, void **image) {
    pg__kernel_src src = {"", name, NULL, NULL, 0, NULL, 0};
    void *fn = NULL;
    REQUIRE_OK(ops->kernel_build(b, &src, image));
    REQUIRE_OK(ops->kernel_function(b, *image, dev, &fn));
    return fn;
}

static void launch(pg__bstream *s, void *fn, void *buf, pg__timing *t) {
    uint64_t params[2] = {(uint64_t)(uintptr_t)buf, 7};
    REQUIRE_OK(ops->launch(b, s, fn, (pg_dim3){4, 1, 1}, (pg_dim3){256, 1, 1}, 0, params, 2, t));
}

/* Kernels without a profile: kernel_us + argument bytes / memory bandwidth; two at once on one
 * GPU share it; a stream wait orders a kernel after another GPU's; events and host waits. */
static void test_kernels_and_events(void) {
    open_sim("pcie-4gpu,host_time=0"); /* A100 PCIe: kernel_us 2.5, 1555 GB/s; launch_us 3 */
    void *img, *f0 = kernel_fn("k", 0, &img), *f1 = NULL;
    REQUIRE_OK(ops->kernel_function(b, img, 1, &f1));
    void *x0 = dev_buf(0, 1555000000), *y0 = dev_buf(0, 1555000000), *x1 = dev_buf(1, 1555);
    pg__bstream *s0 = stream(0), *s0b = stream(0), *s1 = stream(1);
    pg__timing t1 = {0}, t2 = {0};
    double before = pg__sim_backend_now(b);
    launch(s0, f0, x0, &t1);
    double kstart, kend;
    pg__bevent *e = record(s0);
    /* Host time frozen: only the launch's 3 us passed; the kernel (1 ms) is not done. */
    CHECK(near(pg__sim_backend_now(b) - before, 3000, 1e-9));
    double launched = pg__sim_backend_now(b);
    CHECK(!ops->event_done(b, e));
    double now = pg__sim_backend_now(b);
    CHECK(ops->event_wait_for(b, e, 100000) == PG_ERROR_TIMEOUT);
    CHECK(near(pg__sim_backend_now(b) - now, 100000, 1e-9));
    /* s1 waits for e: its kernel starts when the first ends. */
    CHECK_OK(ops->stream_wait(b, s1, e));
    launch(s1, f1, x1, &t2);
    CHECK_OK(ops->event_wait(b, e));
    CHECK(ops->event_done(b, e));
    times(&t1, &kstart, &kend);
    CHECK(near(kend - kstart, 2500 + 1555000000 / 1555.0, 1e-9));
    CHECK(near(kstart - launched, 2600, 1e-9));       /* launch_latency_us after the call */
    CHECK(near(pg__sim_backend_now(b), kend, 1e-12)); /* the wait moved the clock there */
    drain(s1);
    double s1start, s1end;
    times(&t2, &s1start, &s1end);
    CHECK(near(s1start, kend, 1e-12) && near(s1end - s1start, 2500 + 1555 / 1555.0, 1e-9));
    ops->event_free(b, e);
    /* Two long kernels at once on gpu0, each reading 1.555 GB in 1 ms, share its memory
     * bandwidth: each takes about twice its time. */
    launch(s0, f0, x0, &t1);
    launch(s0b, f0, y0, &t2);
    drain(s0);
    drain(s0b);
    double one = 2500 + 1e6;
    CHECK(near(dur_ns(&t1), 2 * one, 0.01) && near(dur_ns(&t2), 2 * one, 0.01));
    /* Back to back on one stream: one after the other, the second starting at the first's end. */
    launch(s0, f0, x0, &t1);
    launch(s0, f0, x0, &t2);
    drain(s0);
    double a0, a1, b0, b1;
    times(&t1, &a0, &a1);
    times(&t2, &b0, &b1);
    CHECK(near(b0, a1, 1e-12) && near(a1 - a0, one, 1e-9) && near(b1 - b0, one, 1e-9));
    ops->stream_free(b, s0);
    ops->stream_free(b, s0b);
    ops->stream_free(b, s1);
    ops->kernel_free(b, img);
    ops->dev_free(b, 0, x0);
    ops->dev_free(b, 0, y0);
    ops->dev_free(b, 1, x1);
    ops->close(b);
}

/* Kernels share a GPU by what they use of it: two small ones (4 blocks, few bytes) run side by
 * side, each in its own time; two that fill the GPU's multiprocessors take turns. */
static void test_kernel_sharing(void) {
    char path[400], spec[600];
    snprintf(path, sizeof path, "%s/share.csv", tmpdir);
    write_file(path, "model,k,*,bytes,100000,0\n"); /* 100 us whatever the bytes */
    snprintf(spec, sizeof spec, "pcie-4gpu,host_time=0,profile=%s", path);
    open_sim(spec); /* 108 SMs x 2048 threads */
    void *img, *f = kernel_fn("k", 0, &img);
    void *x = dev_buf(0, 1555), *y = dev_buf(0, 1555);
    pg__bstream *s0 = stream(0), *s1 = stream(0);
    pg__timing t1 = {0}, t2 = {0};
    launch(s0, f, x, &t1);
    launch(s1, f, y, &t2);
    drain(s0);
    drain(s1);
    double a0, a1, c0, c1, one = 100000;
    times(&t1, &a0, &a1);
    times(&t2, &c0, &c1);
    CHECK(near(a1 - a0, one, 1e-9) && near(c1 - c0, one, 1e-9) && c0 < a1);
    /* 108 x 2048 threads each: the whole GPU; the second waits in effect for the first. */
    uint64_t params[2] = {(uint64_t)(uintptr_t)x, 7};
    pg_dim3 grid = {108 * 8, 1, 1}, block = {256, 1, 1};
    REQUIRE_OK(ops->launch(b, s0, f, grid, block, 0, params, 2, &t1));
    REQUIRE_OK(ops->launch(b, s1, f, grid, block, 0, params, 2, &t2));
    drain(s0);
    drain(s1);
    times(&t1, &a0, &a1);
    times(&t2, &c0, &c1);
    CHECK(near(c1 - a0, 2 * one, 1e-9)); /* the GPU busy throughout, with twice the work */
    ops->stream_free(b, s0);
    ops->stream_free(b, s1);
    ops->kernel_free(b, img);
    ops->dev_free(b, 0, x);
    ops->dev_free(b, 0, y);
    ops->close(b);
}

/* A link's duplex limit (both directions together) and the host's DMA limit (every copy between
 * host memory and a GPU together). */
static void test_duplex_and_dma(void) {
    char path[400], spec[500];
    snprintf(path, sizeof path, "%s/duplex.topo", tmpdir);
    write_file(path, "host dma_gbps=25 copy_us=0\n"
                     "gpu_type g name=G memory=1G cc=8.0 sms=10 memory_gbps=100\n"
                     "gpus 2 g\n"
                     "link gpu0 host 10 0 duplex=15\n"
                     "link gpu1 host 10 0 duplex=15\n"
                     "link gpu0 gpu1 50 0\n");
    snprintf(spec, sizeof spec, "%s,host_time=0", path);
    open_sim(spec);
    pg__bstream *s[4] = {stream(0), stream(0), stream(1), stream(1)};
    pg__timing t[4] = {{0}};
    enum { B = 150000000 };
    copy(s[0], 0, PG_HOST, B, &t[0]); /* alone: 10 GB/s */
    drain(s[0]);
    CHECK(near(dur_ns(&t[0]), B / 10.0, 1e-9));
    copy(s[0], 0, PG_HOST, B, &t[0]); /* both ways at once: 15 together, 7.5 each */
    copy(s[1], PG_HOST, 0, B, &t[1]);
    drain(s[0]);
    drain(s[1]);
    CHECK(near(dur_ns(&t[0]), B / 7.5, 1e-9) && near(dur_ns(&t[1]), B / 7.5, 1e-9));
    /* Both GPUs both ways: 25 GB/s for the four together, 6.25 each. */
    copy(s[0], 0, PG_HOST, B, &t[0]);
    copy(s[1], PG_HOST, 0, B, &t[1]);
    copy(s[2], 1, PG_HOST, B, &t[2]);
    copy(s[3], PG_HOST, 1, B, &t[3]);
    for (int i = 0; i < 4; i++)
        drain(s[i]);
    for (int i = 0; i < 4; i++)
        CHECK(near(dur_ns(&t[i]), B / 6.25, 1e-9));
    /* Between GPUs: neither limit applies. */
    copy(s[0], 1, 0, B, &t[0]);
    drain(s[0]);
    CHECK(near(dur_ns(&t[0]), B / 50.0, 1e-9));
    for (int i = 0; i < 4; i++)
        ops->stream_free(b, s[i]);
    ops->close(b);
}

/* A graph is launched as one operation: the host pays graph_us + graph_node_ns per node once;
 * its nodes run on both GPUs after the work before them on the stream and in their dependency
 * order; work after the launch starts when the last node ends; a second launch follows the
 * first. */
static void test_graphs(void) {
    open_sim("h200x2-nv18,host_time=0"); /* graph_us 2.5, node 1 ns; 4170 GB/s; NV 394 GB/s */
    void *img, *f0 = kernel_fn("k", 0, &img), *f1 = NULL;
    REQUIRE_OK(ops->kernel_function(b, img, 1, &f1));
    enum { XB = 417000000, CB = 39400000 };
    void *x0 = dev_buf(0, XB), *x1 = dev_buf(1, XB), *c0 = dev_buf(0, CB), *c1 = dev_buf(1, CB);
    uint64_t p0[2] = {(uint64_t)(uintptr_t)x0, 7}, p1[2] = {(uint64_t)(uintptr_t)x1, 7};
    const int d0[] = {0}, d1[] = {1}, d2[] = {0}, d4[] = {2, 3};
    pg_dim3 g = {4, 1, 1}, bl = {256, 1, 1};
    pg__bnode n[5] = {
        {.kind = PG__BNODE_LAUNCH,
         .dev = 0,
         .fn = f0,
         .grid = g,
         .block = bl,
         .params = p0,
         .nparams = 2},
        {.kind = PG__BNODE_COPY,
         .dev = 1,
         .dst_dev = 1,
         .src_dev = 0,
         .dst = c1,
         .src = c0,
         .bytes = CB,
         .deps = d0,
         .ndeps = 1},
        {.kind = PG__BNODE_LAUNCH,
         .dev = 1,
         .fn = f1,
         .grid = g,
         .block = bl,
         .params = p1,
         .nparams = 2,
         .deps = d1,
         .ndeps = 1},
        {.kind = PG__BNODE_LAUNCH,
         .dev = 0,
         .fn = f0,
         .grid = g,
         .block = bl,
         .params = p0,
         .nparams = 2,
         .deps = d2,
         .ndeps = 1},
        {.kind = PG__BNODE_EMPTY, .dev = 0, .deps = d4, .ndeps = 2},
    };
    void *graph = NULL;
    REQUIRE_OK(ops->graph_build(b, n, 5, &graph));
    pg__bstream *s = stream(0);
    pg__timing t0 = {0}, t1 = {0};
    launch(s, f0, x0, &t0); /* before the graph: 102 us */
    double before = pg__sim_backend_now(b);
    REQUIRE_OK(ops->graph_launch(b, s, graph));
    CHECK(near(pg__sim_backend_now(b) - before, 2500 + 5, 1e-9)); /* one launch, not five */
    launch(s, f0, x0, &t1);                                       /* after the graph */
    drain(s);
    double k = 2000 + XB / 4170.0, a0, a1, z0, z1;
    times(&t0, &a0, &a1);
    times(&t1, &z0, &z1);
    CHECK(near(a1 - a0, k, 1e-9));
    /* kernel, an edge to gpu1 (graph_edge_us 8.6), the copy (4.9 us latency + 100 us) beside
     * the second gpu0 kernel, the gpu1 kernel, an edge back to the gpu0 node that ends it */
    double copy_ns = 4900 + CB / 394.0, edge_ns = 8600;
    CHECK(near(z0 - a1, 2 * k + copy_ns + 2 * edge_ns, 1e-6));
    /* A second launch after the first; the stream's next kernel after both. */
    REQUIRE_OK(ops->graph_launch(b, s, graph));
    REQUIRE_OK(ops->graph_launch(b, s, graph));
    launch(s, f0, x0, &t1);
    drain(s);
    double y0, y1;
    times(&t1, &y0, &y1);
    /* the first starts launch_latency_us after its call (2.6 + the call's 2.505 us) */
    CHECK(near(y0 - z1, 5105 + 2 * (2 * k + copy_ns + 2 * edge_ns), 1e-6));
    ops->stream_free(b, s);
    ops->graph_free(b, graph);
    /* A node on a device that does not exist is refused. */
    n[0].dev = 5;
    CHECK(ops->graph_build(b, n, 1, &graph) == PG_ERROR_INTERNAL);
    ops->kernel_free(b, img);
    ops->dev_free(b, 0, x0);
    ops->dev_free(b, 1, x1);
    ops->dev_free(b, 0, c0);
    ops->dev_free(b, 1, c1);
    ops->close(b);
}

/* host_time=1: the host's real time between calls moves the clock; 0 freezes it. */
/* graph_edge_us: a node waits that long after a node it follows on another GPU, the stream's
 * earlier work counting as on the stream's GPU; the work after the launch waits as long for a
 * last node on another GPU. 0 (the default): edges cost nothing. */
static double edge_gap_ns(const char *edge_key) {
    char topo[400], prof[400], spec[900], text[600];
    snprintf(topo, sizeof topo, "%s/edges.topo", tmpdir);
    snprintf(prof, sizeof prof, "%s/edges.csv", tmpdir);
    snprintf(text, sizeof text,
             "host launch_us=0 copy_us=0 launch_latency_us=0 graph_us=0 graph_node_ns=0 %s\n"
             "gpu_type g name=G memory=1G cc=8.0 sms=10 memory_gbps=100\n"
             "gpus 2 g\nlink gpu0 host 10 1\nlink gpu1 host 10 1\n",
             edge_key);
    write_file(topo, text);
    write_file(prof, "model,k,*,bytes,100000,0\n"); /* 100 us */
    snprintf(spec, sizeof spec, "%s,host_time=0,profile=%s", topo, prof);
    open_sim(spec);
    void *img, *f0 = kernel_fn("k", 0, &img), *f1 = NULL;
    REQUIRE_OK(ops->kernel_function(b, img, 1, &f1));
    void *x0 = dev_buf(0, 64), *x1 = dev_buf(1, 64);
    uint64_t p1[2] = {(uint64_t)(uintptr_t)x1, 7};
    pg__bnode n[1] = {{.kind = PG__BNODE_LAUNCH,
                       .dev = 1,
                       .fn = f1,
                       .grid = {1, 1, 1},
                       .block = {32, 1, 1},
                       .params = p1,
                       .nparams = 2}};
    void *graph = NULL;
    REQUIRE_OK(ops->graph_build(b, n, 1, &graph));
    pg__bstream *s = stream(0);
    pg__timing t0 = {0}, t1 = {0};
    launch(s, f0, x0, &t0);
    REQUIRE_OK(ops->graph_launch(b, s, graph));
    launch(s, f0, x0, &t1);
    drain(s);
    double a0, a1, z0, z1;
    times(&t0, &a0, &a1);
    times(&t1, &z0, &z1);
    ops->stream_free(b, s);
    ops->graph_free(b, graph);
    ops->kernel_free(b, img);
    ops->dev_free(b, 0, x0);
    ops->dev_free(b, 1, x1);
    ops->close(b);
    return z0 - a1;
}

static void test_graph_edges(void) {
    CHECK(near(edge_gap_ns(""), 100000, 1e-9));                 /* the gpu1 node alone */
    CHECK(near(edge_gap_ns("graph_edge_us=10"), 120000, 1e-9)); /* and an edge each way */
    bad_topo("host graph_edge_us=-1\n", ":1: graph_edge_us=-1 is not");
}

static void test_host_time(void) {
    for (int frozen = 0; frozen < 2; frozen++) {
        open_sim(frozen ? "h200x4-nv18,host_time=0" : "h200x4-nv18,host_time=1");
        void *img, *f = kernel_fn("k", 0, &img);
        void *x = dev_buf(0, 4800);
        pg__bstream *s = stream(0);
        pg__timing t1 = {0}, t2 = {0};
        launch(s, f, x, &t1);
        nanosleep(&(struct timespec){0, 30000000}, NULL); /* the script computes for 30 ms */
        launch(s, f, x, &t2);
        drain(s);
        double a0, a1, b0, b1;
        times(&t1, &a0, &a1);
        times(&t2, &b0, &b1);
        if (frozen) /* 2 us kernels, 2.9 us launches: issue-bound, one launch apart */
            CHECK(near(b0 - a0, 2900, 1e-12) && b0 > a1);
        else
            CHECK(b0 - a0 >= 30e6); /* the second launch came 30 ms later */
        ops->stream_free(b, s);
        ops->kernel_free(b, img);
        ops->dev_free(b, 0, x);
        ops->close(b);
    }
}

static void test_memory(void) {
    open_sim("pcie-4gpu,host_time=0"); /* 40 GiB each */
    void *p = NULL, *q = NULL;
    CHECK_OK(ops->dev_alloc(b, 0, (size_t)30 << 30, NULL, &p));
    CHECK_MSG(ops->dev_alloc(b, 0, (size_t)20 << 30, NULL, &q), PG_ERROR_OUT_OF_MEMORY,
              "simulated GPU 0 (NVIDIA A100-PCIE-40GB) is out of memory");
    CHECK_OK(ops->dev_alloc(b, 1, (size_t)20 << 30, NULL, &q)); /* another GPU has room */
    ops->dev_free(b, 0, p);
    void *r = NULL;
    CHECK_OK(ops->dev_alloc(b, 0, (size_t)20 << 30, NULL, &r));
    CHECK(r != q);
    ops->dev_free(b, 1, q);
    ops->dev_free(b, 0, r);
    pg_device_info info;
    CHECK_OK(ops->device_info(b, 3, &info));
    CHECK(info.kind == PG_DEVICE_CUDA && info.memory_bytes == (uint64_t)40 << 30 &&
          info.compute_major == 8 && info.multiprocessors == 108 &&
          info.max_threads_per_block == 1024 && info.max_shared_memory_per_block == 166912 &&
          !strncmp(info.uuid, "SIM-", 4));
    ops->close(b);
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
}

static void test_profiles(void) {
    char path[400];
    snprintf(path, sizeof path, "%s/profile.csv", tmpdir);
    /* Samples linear in bytes, a kernel whose name holds a comma and a quote, and samples
     * linear in threads. */
    for (int i = 1; i <= 5; i++) {
        uint64_t bytes = (uint64_t)i * 1000000;
        CHECK_OK(pg__sim_profile_append(path, "axpy", "NVIDIA H200", (pg_dim3){64, 1, 1},
                                        (pg_dim3){256, 1, 1}, bytes, 1000 + bytes / 2));
        CHECK_OK(pg__sim_profile_append(path, "tmpl<float, \"q\">", "NVIDIA H200",
                                        (pg_dim3){(uint32_t)i * 10, 2, 1}, (pg_dim3){128, 1, 1},
                                        1000, 500 + 3 * (uint64_t)i * 10 * 2 * 128));
    }
    FILE *f = fopen(path, "a");
    fputs("model,axpy,*,threads,7,0\n", f);
    fclose(f);
    pg__sim_profile *p = NULL;
    REQUIRE_OK(pg__sim_profile_load(path, 0, &p));
    CHECK(pg__sim_profile_count(p) == 3);
    const pg__sim_model *m = pg__sim_profile_find(p, "axpy", "NVIDIA H200");
    CHECK(m && m->x == PG__SIM_X_BYTES && fabs(m->a_ns - 1000) < 1e-6 &&
          fabs(m->b_ns - 0.5) < 1e-9);
    CHECK(m && near(pg__sim_model_ns(m, 4000000, 1), 2001000, 1e-12));
    m = pg__sim_profile_find(p, "tmpl<float, \"q\">", "NVIDIA H200");
    CHECK(m && m->x == PG__SIM_X_THREADS && fabs(m->a_ns - 500) < 1e-6 && fabs(m->b_ns - 3) < 1e-9);
    /* Another device: the "*" model; an unknown kernel: none (the default applies). */
    m = pg__sim_profile_find(p, "axpy", "Tesla V100-SXM2-32GB");
    CHECK(m && m->x == PG__SIM_X_THREADS && m->a_ns == 7);
    CHECK(!pg__sim_profile_find(p, "other", "NVIDIA H200"));
    pg__sim_profile_free(p);

    /* The recording's offset comes off each sample (not below the smaller of the sample and
     * 0.5 us); samples of one x count at their median; model lines stay as written. */
    REQUIRE_OK(pg__sim_profile_load(path, 1000, &p));
    m = pg__sim_profile_find(p, "axpy", "NVIDIA H200");
    CHECK(m && m->x == PG__SIM_X_BYTES && fabs(m->a_ns) < 1e-6 && fabs(m->b_ns - 0.5) < 1e-9);
    m = pg__sim_profile_find(p, "axpy", "*");
    CHECK(m && m->a_ns == 7);
    pg__sim_profile_free(p);
    write_file(path, "sample,k,d,4x1x1,32x1x1,100,3000\nsample,k,d,4x1x1,32x1x1,100,3100\n"
                     "sample,k,d,4x1x1,32x1x1,100,90000\nsample,t,d,1x1x1,1x1x1,0,1200\n"
                     "sample,u,d,1x1x1,1x1x1,0,300\n");
    REQUIRE_OK(pg__sim_profile_load(path, 1000, &p));
    m = pg__sim_profile_find(p, "k", "d");
    CHECK(m && fabs(m->a_ns - 2100) < 1e-6 && m->b_ns == 0); /* median 3100, less 1000 */
    m = pg__sim_profile_find(p, "t", "d");
    CHECK(m && fabs(m->a_ns - 500) < 1e-6); /* 200 would be below 0.5 us */
    m = pg__sim_profile_find(p, "u", "d");
    CHECK(m && fabs(m->a_ns - 300) < 1e-6); /* a sample shorter than 0.5 us stays */
    pg__sim_profile_free(p);

    /* Errors name the file and line. */
    write_file(path, "# a profile\nmodel,k,*,bytes,1,0\nsample,k,dev,4x1,1x1x1,10,10\n");
    CHECK_MSG(pg__sim_profile_load(path, 0, &p), PG_ERROR_ARGUMENT, "profile.csv:3: grid '4x1'");
    write_file(path, "model,k,*,flops,1,0\n");
    CHECK_MSG(pg__sim_profile_load(path, 0, &p), PG_ERROR_ARGUMENT,
              ":1: x 'flops' is neither bytes nor threads");
    write_file(path, "model,k,*,bytes,1,0\nmodel,k,*,bytes,2,0\n");
    CHECK_MSG(pg__sim_profile_load(path, 0, &p), PG_ERROR_ARGUMENT, ":2: a second model for k");
    write_file(path, "model,\"k,1\n");
    CHECK_MSG(pg__sim_profile_load(path, 0, &p), PG_ERROR_ARGUMENT, ":1: a quoted field");
    CHECK_MSG(pg__sim_profile_load("/nonexistent/p.csv", 0, &p), PG_ERROR_NOT_FOUND,
              "/nonexistent/p.csv");

    /* A profile given to the backend sets the kernel's duration. */
    write_file(path, "model,k,NVIDIA H200,threads,1000,2\n");
    char spec[600];
    snprintf(spec, sizeof spec, "h200x4-nv18,host_time=0,profile=%s", path);
    open_sim(spec);
    void *img, *fn = kernel_fn("k", 2, &img);
    pg__bstream *s = stream(2);
    pg__timing t = {0};
    launch(s, fn, NULL, &t);
    drain(s);
    CHECK(near(dur_ns(&t), 1000 + 2 * 1024, 1e-12));
    ops->stream_free(b, s);
    ops->kernel_free(b, img);
    ops->close(b);
}

static void bad_topo(const char *text, const char *needle) {
    char path[400];
    snprintf(path, sizeof path, "%s/bad.topo", tmpdir);
    write_file(path, text);
    static pg__sim_topo t;
    CHECK_MSG(pg__sim_topo_load(path, &t), PG_ERROR_ARGUMENT, needle);
}

#define GPU_TYPE "gpu_type g name=G memory=1G cc=8.0 sms=10 memory_gbps=100\n"

static void test_topology_errors(void) {
    bad_topo("name x\nfrobnicate 3\n", "bad.topo:2: unknown statement 'frobnicate'");
    bad_topo(GPU_TYPE "gpus 2 g\nlink gpu0 host 10 1\n", "no route from host to gpu1");
    bad_topo(GPU_TYPE "gpus 2 g\nlink gpu0 gpu7 10 1\n", ":3: unknown node 'gpu7'");
    bad_topo("gpu_type g name=G memory=1G cc=8.0 sms=10\n", ":1: gpu_type g lacks memory_gbps=");
    bad_topo(GPU_TYPE "gpus 17 g\n", ":2: more than 16 GPUs");
    bad_topo(GPU_TYPE "gpus 1 g\nlink gpu0 host -1 1\n", ":3: bandwidth=-1 is not a positive");
    bad_topo(GPU_TYPE "gpus 1 g\nswitch gpu9\n", ":3: switch name 'gpu9' is not valid");
    bad_topo("name \"unclosed\n", ":1: a quote that is not closed");
    bad_topo("# nothing\n", "no GPUs");
    bad_topo(GPU_TYPE "gpus 1 g\nlink gpu0 host 10 1 duplex=0\n", ":3: duplex=0 is not a positive");
    bad_topo(GPU_TYPE "gpus 1 g\nlink gpu0 host 10 1 half=3\n", ":3: 'half=3' is not duplex=GBPS");
    bad_topo(GPU_TYPE "gpus 1 g\ndlink gpu0 host 10 1 duplex=3\n", ":3: expected: dlink A B");
    bad_topo("host dma=3\n", ":1: unknown host key 'dma' (memory_gbps, dma_gbps");
    bad_topo("gpu_type g name=G memory=1G cc=8.0 sms=10 memory_gbps=100 sm_threads=0.5\n",
             ":1: sm_threads=0.5 is not a whole number");
    /* Unknown presets list the ones there are; options are checked. */
    CHECK_MSG(pg__sim_backend_open("nope", 0, &ops, &b, &ndev), PG_ERROR_NOT_FOUND,
              "dgx1-v100, dgx2-v100");
    CHECK_MSG(pg__sim_backend_open("dgx1-v100,compute=gpu", 0, &ops, &b, &ndev), PG_ERROR_ARGUMENT,
              "compute 'gpu' is not none");
    CHECK_MSG(pg__sim_backend_open("dgx1-v100,speed=2", 0, &ops, &b, &ndev), PG_ERROR_ARGUMENT,
              "unknown option 'speed'");
    CHECK_MSG(pg__sim_backend_open("dgx1-v100,host_time=-1", 0, &ops, &b, &ndev), PG_ERROR_ARGUMENT,
              "host_time '-1'");
    CHECK_MSG(pg__sim_backend_open("./no-such.topo", 0, &ops, &b, &ndev), PG_ERROR_NOT_FOUND,
              "cannot read topology file ./no-such.topo");
}

int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "%s/pg-sim-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_copies();
    test_routes();
    test_kernels_and_events();
    test_kernel_sharing();
    test_duplex_and_dma();
    test_graphs();
    test_graph_edges();
    test_host_time();
    test_memory();
    test_profiles();
    test_topology_errors();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    CHECK_DONE();
}
