/* test_placement_cases.c: the four placement cases of issue 16 and a fifth (E), on CPU devices with
 * every kernel held running (it waits for a flag in host memory) so that parents are unfinished and
 * streams busy when the next call is placed. A and B: when a child reuses a parent's stream and
 * over which devices the device policy is asked (the GrCUDA paper's Figure 5 flow); C: the
 * exploration threshold on the DGX-1 V100 matrix and on uniform ones; D: a host access or prefetch
 * waits only for the array's writer, not for later work queued on the writer's stream; E: a small
 * parent's device does not pull a large input away from where it is. Always CPU devices
 * (PG_TEST_DEVICES does not apply): the held kernels read the flag through a host pointer. */
#include "dag_view.h"
#include "kernels_common.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

/* Each kernel spins (sleeping) until *flag != 0, then writes 1 to the first element of each
 * output, so a host read can tell that the writer ran. */
static const char *HOLD_SRC =
    "__device__ void hold(unsigned long long flag) {\n"
    "  while (*(volatile const int *)flag == 0) {\n"
    "    struct timespec t = {0, 200000}; nanosleep(&t, 0);\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void k_w(float *x, unsigned long long f) { hold(f); x[0] = 1; }\n"
    "extern \"C\" __global__ void k_r(const float *x, unsigned long long f) { hold(f); }\n"
    "extern \"C\" __global__ void k_rw(const float *x, float *y, unsigned long long f) {\n"
    "  hold(f); y[0] = 1; }\n"
    "extern \"C\" __global__ void k_rrw(const float *a, const float *b, float *y,\n"
    "                                  unsigned long long f) { hold(f); y[0] = 1; }\n"
    "extern \"C\" __global__ void k_ww(float *a, float *b, unsigned long long f) {\n"
    "  hold(f); a[0] = 1; b[0] = 1; }\n";

/* Bound on every wait for the other threads: a failure then shows as a failed check, not a hang. */
#define WAIT_LIMIT_MS 20000

typedef struct ctx {
    pg_runtime *rt;
    pg_kernel *w, *r, *rw, *rrw, *ww, *o;
    int flag; /* every kernel of the case waits for it */
    int kernels_before;
} ctx;

static char tmpdir[64];

static pg_kernel *kernel(pg_runtime *rt, const char *name, const char *sig) {
    pg_kernel *k = NULL;
    REQUIRE_OK(pg_kernel_new(rt, HOLD_SRC, name, sig, NULL, &k));
    return k;
}

static void open_ctx(ctx *c, const char *devices, const char *policy, const char *parent,
                     const char *interconnect) {
    pg_options o;
    pg_options_init(&o);
    o.devices = devices;
    o.policy = policy;
    o.parent_stream_policy = parent;
    o.interconnect = interconnect;
    memset(c, 0, sizeof *c);
    REQUIRE_OK(pg_runtime_new(&o, &c->rt));
    c->w = kernel(c->rt, "k_w", "inout float *x, uint64_t f");
    c->r = kernel(c->rt, "k_r", "in const float *x, uint64_t f");
    c->rw = kernel(c->rt, "k_rw", "in const float *x, out float *y, uint64_t f");
    c->rrw =
        kernel(c->rt, "k_rrw", "in const float *a, in const float *b, out float *y, uint64_t f");
    c->ww = kernel(c->rt, "k_ww", "out float *a, out float *b, uint64_t f");
    c->o = kernel(c->rt, "k_w", "out float *x, uint64_t f"); /* reads nothing */
}

static void release(int *flag) {
    __atomic_store_n(flag, 1, __ATOMIC_SEQ_CST);
}

static void close_ctx(ctx *c) {
    release(&c->flag);
    REQUIRE_OK(pg_runtime_sync(c->rt));
    pg_kernel *ks[] = {c->w, c->r, c->rw, c->rrw, c->ww, c->o};
    for (int i = 0; i < 6; i++)
        CHECK_OK(pg_kernel_free(ks[i]));
    CHECK_OK(pg_runtime_free(c->rt)); /* frees the arrays too */
}

/* Launch k on the arrays (in parameter order), held on `flag`. */
static void launch_on(ctx *c, pg_kernel *k, int *flag, pg_array *a0, pg_array *a1, pg_array *a2) {
    pg_arg args[4];
    int n = 0;
    pg_array *as[] = {a0, a1, a2};
    for (int i = 0; i < 3 && as[i]; i++)
        args[n++] = pg_arg_array(as[i]);
    args[n++] = pg_arg_uint((uint64_t)(uintptr_t)flag);
    REQUIRE_OK(pg_kernel_launch(k, dim1(1), dim1(1), 0, args, n));
}

static void launch(ctx *c, pg_kernel *k, pg_array *a0, pg_array *a1, pg_array *a2) {
    launch_on(c, k, &c->flag, a0, a1, a2);
}

/* Host-written array: its only valid copy is on the host. */
static pg_array *host_array(pg_runtime *rt, int64_t n) {
    pg_array *a = test_array(rt, n);
    float *v = calloc((size_t)n, sizeof *v);
    REQUIRE_OK(pg_array_write(a, 0, (uint64_t)n, v));
    free(v);
    return a;
}

/* Device and stream of the first n kernels of the runtime, in submission order. */
static void placed(ctx *c, int n, int *dev, int *stream) {
    static tdag dag;
    tdag_load(c->rt, &dag);
    for (int i = 0; i < n; i++) {
        const tvertex *v = tdag_vertex(&dag, tdag_nth(&dag, "kernel", i));
        dev[i] = v ? v->device : -9;
        stream[i] = v ? v->stream : -9;
    }
}

static int check_places(ctx *c, const char *what, int n, const int *want_dev,
                        const int *want_stream) {
    int dev[16], stream[16], ok = 1;
    placed(c, n, dev, stream);
    for (int i = 0; i < n; i++)
        ok &= dev[i] == want_dev[i] && stream[i] == want_stream[i];
    if (!ok) {
        fprintf(stderr, "%s: placed", what);
        for (int i = 0; i < n; i++)
            fprintf(stderr, " (%d,%d)", dev[i], stream[i]);
        fprintf(stderr, ", expected");
        for (int i = 0; i < n; i++)
            fprintf(stderr, " (%d,%d)", want_dev[i], want_stream[i]);
        fprintf(stderr, "\n");
    }
    return ok;
}

/* ---- A: K(x); K(R(x)); K(R(x)) on host:2. The second reader finds its parent's stream taken:
 * it gets a new stream from the device policy, over every device. */
static void case_a(const char *policy, const char *parent, const int *dev, const int *stream) {
    ctx c;
    open_ctx(&c, "host:2", policy, parent, NULL);
    pg_array *x = test_array(c.rt, 1024);
    launch(&c, c.w, x, NULL, NULL);
    launch(&c, c.r, x, NULL, NULL);
    launch(&c, c.r, x, NULL, NULL);
    char what[128];
    snprintf(what, sizeof what, "case A, %s + %s", policy, parent);
    CHECK(check_places(&c, what, 3, dev, stream));
    close_ctx(&c);
}

/* ---- B: K(R(x0), s0); K(R(x1), s1); K(m); K(R(m), R(x0), y0); K(R(m), R(x1), y1) on host:2.
 * x1 (four times m's size) is on device 1 after the second call. The last call's only parent
 * (the writer of m) has given its stream to the fourth call, so the device policy is asked over
 * every device, and it picks device 1, where x1 is. */
#define BN 4096
static void case_b(const char *policy, const char *parent, const int *dev, const int *stream) {
    ctx c;
    open_ctx(&c, "host:2", policy, parent, NULL);
    pg_array *x0 = host_array(c.rt, 4 * BN), *x1 = host_array(c.rt, 4 * BN);
    pg_array *s0 = test_array(c.rt, BN), *s1 = test_array(c.rt, BN), *m = test_array(c.rt, BN);
    pg_array *y0 = test_array(c.rt, BN), *y1 = test_array(c.rt, BN);
    launch(&c, c.rw, x0, s0, NULL);
    launch(&c, c.rw, x1, s1, NULL);
    launch(&c, c.w, m, NULL, NULL);
    launch(&c, c.rrw, m, x0, y0);
    launch(&c, c.rrw, m, x1, y1);
    char what[128];
    snprintf(what, sizeof what, "case B, %s + %s", policy, parent);
    CHECK(check_places(&c, what, 5, dev, stream));
    close_ctx(&c);
}

/* ---- C: the exploration threshold. */

/* The DGX-1 V100's hybrid cube mesh: each V100 has six NVLink2 links; GPUs 0-3 and 4-7 are
 * fully connected within their group and GPU i to i + 4; pairs 0-3, 0-4, 1-2, 1-5, 2-3, 4-7,
 * 5-6, 6-7 use two links, the other NVLink pairs one; the rest go over PCIe through the host.
 * Topology: NVIDIA's "DGX-1 with Tesla V100 System Architecture" white paper, as reported by
 * NCCL's topology dump of a DGX-1V (github.com/NVIDIA/nccl/issues/671: GPU0 has count=1 links
 * to GPUs 1 and 2 and count=2 to GPUs 3 and 4; GPU1 count=2 to 2 and 5, count=1 to 0 and 3).
 * Bandwidths: GrCUDA's measurement on 8 V100s (necst/grcuda, projects/resources/
 * connection_graph/datasets/connection_graph_test_8_v100.csv): ~48.4 GB/s over two links,
 * ~24.2 over one, ~8.5 GPU to GPU without NVLink, ~11.95 host to GPU. */
static double dgx1_peer(int a, int b) {
    static const int two[][2] = {{0, 3}, {0, 4}, {1, 2}, {1, 5}, {2, 3}, {4, 7}, {5, 6}, {6, 7}};
    static const int one[][2] = {{0, 1}, {0, 2}, {1, 3}, {2, 6}, {3, 7}, {4, 5}, {4, 6}, {5, 7}};
    for (int i = 0; i < 8; i++) {
        if ((two[i][0] == a && two[i][1] == b) || (two[i][0] == b && two[i][1] == a))
            return 48.4;
        if ((one[i][0] == a && one[i][1] == b) || (one[i][0] == b && one[i][1] == a))
            return 24.2;
    }
    return 8.5;
}

static double uniform_peer(int a, int b) {
    (void)a;
    (void)b;
    return 48.4;
}

/* Writes tmpdir/name; path gets its path. */
static void write_matrix(char *path, size_t cap, const char *name, double host,
                         double (*peer)(int, int)) {
    snprintf(path, cap, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    fprintf(f, "src,dst,bandwidth_gbps,latency_us\n");
    for (int d = 0; d < 8; d++)
        fprintf(f, "host,%d,%g,1\n%d,host,%g,1\n", d, host, d, host);
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 8; b++)
            if (a != b)
                fprintf(f, "%d,%d,%g,1\n", a, b, peer(a, b));
    fclose(f);
}

/* Eight K(R(x_i), R(y), z_i), each x_i large and only on the host, y small (under 10% of the
 * input bytes) and shared: no device holds enough of any call's inputs, so every choice is
 * data-blind and the eight spread over the eight devices. Then a call reading x_3 again goes
 * where x_3 now is (it holds all its inputs there), busy as that device is. */
#define CX 65536
#define CY 1024
static void case_c(const char *policy, const char *matrix, const char *interconnect) {
    ctx c;
    open_ctx(&c, "host:8", policy, NULL, interconnect);
    pg_array *y = host_array(c.rt, CY), *x[8], *z[9];
    for (int i = 0; i < 8; i++) {
        x[i] = host_array(c.rt, CX);
        z[i] = test_array(c.rt, 16);
    }
    z[8] = test_array(c.rt, 16);
    for (int i = 0; i < 8; i++)
        launch(&c, c.rrw, x[i], y, z[i]);
    launch(&c, c.rrw, x[3], y, z[8]);
    int dev[9], stream[9];
    placed(&c, 9, dev, stream);
    unsigned used = 0;
    for (int i = 0; i < 8; i++)
        used |= 1u << dev[i];
    if (used != 0xff || dev[8] != dev[3]) {
        fprintf(stderr, "case C, %s on %s: devices", policy, matrix);
        for (int i = 0; i < 9; i++)
            fprintf(stderr, " %d", dev[i]);
        fprintf(stderr, ", expected each of 0..7 once, then the fourth one\n");
    }
    CHECK(used == 0xff);
    CHECK(dev[8] == dev[3]);
    close_ctx(&c);
}

/* ---- D: K1 writes a and b; K2 reads only b and waits on the same stream; the host then reads
 * a, writes part of a, or prefetches a. The copy of a to the host must wait for K1 only. */

typedef struct helper {
    pg_runtime *rt;
    uint64_t accesses; /* host accesses counted before the one this helper waits for */
    int *flag;
} helper;

/* Once the host access has been submitted (its copy issued, still waiting for K1), let K1
 * finish. */
static void *release_after_access(void *p) {
    helper *h = p;
    for (int ms = 0; ms < WAIT_LIMIT_MS; ms += 5) {
        pg_stats st;
        if (pg_runtime_stats(h->rt, &st) == PG_OK && st.host_accesses > h->accesses)
            break;
        usleep(5000);
    }
    release(h->flag);
    return NULL;
}

/* K2 runs until the main thread, after its host access returned, sets the flag to 1. If the
 * access waits for K2 instead, this sets it to 2 after WAIT_LIMIT_MS so that the access returns
 * and the test fails instead of hanging. */
static void *watchdog(void *p) {
    int *flag = p;
    for (int ms = 0; ms < WAIT_LIMIT_MS && !__atomic_load_n(flag, __ATOMIC_SEQ_CST); ms += 5)
        usleep(5000);
    int zero = 0;
    __atomic_compare_exchange_n(flag, &zero, 2, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return NULL;
}

/* Set K2's flag to 1: fails if the watchdog already released K2 (the access waited for it). */
static int released_k2_in_time(int *flag) {
    int zero = 0;
    return __atomic_compare_exchange_n(flag, &zero, 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

enum { D_READ, D_WRITE, D_PREFETCH };

static void case_d(int how) {
    static const char *names[] = {"read", "write", "prefetch"};
    ctx c;
    open_ctx(&c, "host:1", "minmax-transfer-time", NULL, NULL);
    int f1 = 0, f2 = 0; /* K1, K2 */
    pg_array *a = test_array(c.rt, 1024), *b = test_array(c.rt, 1024);
    launch_on(&c, c.ww, &f1, a, b, NULL);
    launch_on(&c, c.r, &f2, b, NULL, NULL);
    int dev[2], stream[2];
    placed(&c, 2, dev, stream);
    CHECK(dev[1] == dev[0] && stream[1] == stream[0]); /* the setting of the case: one stream */
    pg_stats st;
    REQUIRE_OK(pg_runtime_stats(c.rt, &st));
    helper h = {c.rt, st.host_accesses, &f1};
    pthread_t releaser, guard;
    pthread_create(&guard, NULL, watchdog, &f2);
    float v = 0, two[2] = {2, 2};
    if (how == D_PREFETCH) {
        CHECK_OK(pg_array_prefetch(a, PG_HOST));
        release(&f1);
        CHECK_OK(pg_array_read(a, 0, 1, &v));
    } else {
        pthread_create(&releaser, NULL, release_after_access, &h);
        if (how == D_READ)
            CHECK_OK(pg_array_read(a, 0, 1, &v));
        else
            CHECK_OK(pg_array_write(a, 1, 2, two)); /* partial: needs a's value on the host */
        pthread_join(releaser, NULL);
    }
    int in_time = released_k2_in_time(&f2);
    if (!in_time)
        fprintf(stderr, "case D (%s): the host access waited for K2, which does not use a\n",
                names[how]);
    CHECK(in_time);
    pthread_join(guard, NULL);
    if (how != D_WRITE)
        CHECK(v == 1.0f); /* K1's value */
    /* In the DAG: the copy of a to the host follows K1 and is not on K2's stream. */
    static tdag dag;
    tdag_load(c.rt, &dag);
    long k1 = tdag_nth(&dag, "kernel", 0), k2 = tdag_nth(&dag, "kernel", 1), copy = -1;
    for (int i = 0; tdag_nth(&dag, "copy", i) >= 0; i++) {
        const tvertex *cv = tdag_vertex(&dag, tdag_nth(&dag, "copy", i));
        if (strstr(cv->name, "->host"))
            copy = cv->id;
    }
    CHECK(copy > 0 && tdag_edge(&dag, k1, copy));
    CHECK(copy > 0 && !tdag_edge(&dag, k2, copy));
    const tvertex *cv = tdag_vertex(&dag, copy), *k2v = tdag_vertex(&dag, k2);
    CHECK(cv && k2v && (cv->device != k2v->device || cv->stream != k2v->stream));
    if (how == D_WRITE) {
        float back[3];
        REQUIRE_OK(pg_array_read(a, 0, 3, back));
        CHECK(back[0] == 1.0f && back[1] == 2.0f && back[2] == 2.0f);
    }
    c.flag = 1;
    close_ctx(&c);
}

/* ---- E: K(a) finished, a on device d_a; K(y) held on the other device; K(R(a), W(y)) under
 * multigpu-disjoint. The child's only unfinished parent is y's writer, whose device holds none of
 * its input bytes while d_a holds all of them: the device policy is asked over every device and
 * the child goes where a is, instead of a being copied to follow y's writer (CG's zeroing kernel
 * dragging each block of the matrix to the other GPU). */
static void case_e(const char *policy) {
    ctx c;
    open_ctx(&c, "host:2", policy, "multigpu-disjoint", NULL);
    int go = 1;
    float v = 0;
    pg_array *a = test_array(c.rt, 4 * BN), *y = test_array(c.rt, 16);
    launch_on(&c, c.w, &go, a, NULL, NULL);
    REQUIRE_OK(pg_array_read(a, 0, 1, &v)); /* a's writer has finished */
    launch(&c, c.w, y, NULL, NULL);
    launch(&c, c.rw, a, y, NULL);
    int dev[3], stream[3];
    placed(&c, 3, dev, stream);
    CHECK(v == 1.0f);
    CHECK(dev[1] != dev[0]); /* the setting of the case: y's writer on the other device */
    if (dev[2] != dev[0])
        fprintf(stderr, "case E, %s: the reader of a went to device %d, a is on device %d\n",
                policy, dev[2], dev[0]);
    CHECK(dev[2] == dev[0]);
    close_ctx(&c);
}

/* ---- F: K(W(a)) held on d_a; K(W(y)) finished on the other device d_y; K(R(a), R(y), W(z))
 * held, on d_a (a's bytes); then K(W(y)), which reads nothing, under multigpu-disjoint. Its only
 * unfinished parent is the reader on d_a, which carries no data to it: it goes where y was
 * last written (CG zeroing each partition's rows where the dot product had read them, and its
 * product then copying the zeros back to the matrix's GPU, once per partition per iteration). */
static void case_f(const char *policy) {
    ctx c;
    open_ctx(&c, "host:2", policy, "multigpu-disjoint", NULL);
    int go = 1;
    float v = 0;
    pg_array *a = test_array(c.rt, 4 * BN), *y = test_array(c.rt, 16), *z = test_array(c.rt, 16);
    launch(&c, c.o, a, NULL, NULL);
    launch_on(&c, c.o, &go, y, NULL, NULL);
    REQUIRE_OK(pg_array_read(y, 0, 1, &v)); /* y's writer has finished */
    launch(&c, c.rrw, a, y, z);
    launch(&c, c.o, y, NULL, NULL);
    int dev[4], stream[4];
    placed(&c, 4, dev, stream);
    CHECK(v == 1.0f);
    CHECK(dev[1] != dev[0] && dev[2] == dev[0]); /* the setting of the case */
    if (dev[3] != dev[1])
        fprintf(stderr, "case F, %s: the writer of y went to device %d, y was written on %d\n",
                policy, dev[3], dev[1]);
    CHECK(dev[3] == dev[1]);
    close_ctx(&c);
}

int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/pg-placement-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }

    /* A. Stream-aware and round-robin both send the second reader to the idle device 1 under
     * the disjoint policies; same-as-parent keeps every call on the parent's stream; the early
     * variant asks the device policy first for every call (the first reader goes to device 1,
     * the second back to device 0 and its parent's stream, which nobody took). */
    {
        const int d_disjoint[] = {0, 0, 1}, s_disjoint[] = {0, 0, 0};
        const int d_same[] = {0, 0, 0}, s_same[] = {0, 0, 0};
        const int d_early[] = {0, 1, 0}, s_early[] = {0, 0, 0};
        /* earliest-finish too: x has a reader already, so it is a shared input, and device 0's
         * queue outlasts its copy. */
        const char *device_policies[] = {"stream-aware", "round-robin", "earliest-finish"};
        for (int p = 0; p < 3; p++) {
            case_a(device_policies[p], "disjoint", d_disjoint, s_disjoint);
            case_a(device_policies[p], "multigpu-disjoint", d_disjoint, s_disjoint);
        }
        case_a("stream-aware", "same-as-parent", d_same, s_same);
        case_a("stream-aware", "multigpu-early-disjoint", d_early, s_early);
        /* A data-aware policy keeps the reader with its data: x is only on device 0. */
        const int d_data[] = {0, 0, 0}, s_data[] = {0, 0, 1};
        case_a("min-transfer-size", "disjoint", d_data, s_data);
        case_a("min-transfer-size", "multigpu-disjoint", d_data, s_data);
    }

    /* B. Under every disjoint policy the last call goes to device 1, where x1 is, on a new
     * stream; same-as-parent keeps it on its parent's stream. */
    {
        const int dev[] = {0, 1, 0, 0, 1}, stream[] = {0, 0, 1, 1, 1};
        const char *parents[] = {"disjoint", "multigpu-disjoint", "multigpu-early-disjoint"};
        const char *policies[] = {"min-transfer-size", "minmax-transfer-time", "earliest-finish"};
        for (int p = 0; p < 3; p++)
            for (int q = 0; q < 3; q++)
                case_b(policies[p], parents[q], dev, stream);
        const int dev_same[] = {0, 1, 0, 0, 0}, stream_same[] = {0, 0, 1, 1, 1};
        case_b("min-transfer-size", "same-as-parent", dev_same, stream_same);
    }

    /* C. On the DGX-1 V100 matrix, on a uniform matrix and on the CPU devices' defaults. */
    {
        char dgx[128], uni[128];
        write_matrix(dgx, sizeof dgx, "dgx1.csv", 11.95, dgx1_peer);
        write_matrix(uni, sizeof uni, "uniform.csv", 11.95, uniform_peer);
        const char *policies[] = {"minmax-transfer-time", "min-transfer-time", "min-transfer-size",
                                  "earliest-finish"};
        for (int p = 0; p < 4; p++) {
            case_c(policies[p], "DGX-1", dgx);
            case_c(policies[p], "uniform", uni);
            case_c(policies[p], "default", "default");
        }
    }

    /* E. Under every data-aware policy (earliest-finish too: a is state, y's writer a small
     * parent). */
    {
        const char *policies[] = {"minmax-transfer-time", "min-transfer-time", "min-transfer-size",
                                  "earliest-finish"};
        for (int p = 0; p < 4; p++)
            case_e(policies[p]);
    }

    /* F. Under every policy that weighs data or load (round-robin rotates). */
    {
        const char *policies[] = {"minmax-transfer-time", "min-transfer-time", "min-transfer-size",
                                  "stream-aware", "earliest-finish"};
        for (int p = 0; p < 5; p++)
            case_f(policies[p]);
    }

    /* D. A host read, a partial host write, a prefetch to the host. */
    case_d(D_READ);
    case_d(D_WRITE);
    case_d(D_PREFETCH);

    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    CHECK_DONE();
}
