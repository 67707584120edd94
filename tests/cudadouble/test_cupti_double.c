/* test_cupti_double.c: the GPU's own timeline (CUPTI, trace option) merged into the DAG
 * snapshot, its C API, the JSON export and the Chrome trace. Modes:
 *   fake     the fake driver and the fake CUPTI (fake_cupti.c via PG_CUPTI_PATH): every kernel
 *            and copy vertex has its GPU span, with its id, device and direction, ordered on
 *            its stream, after its submission and its driver call, before the sync returned;
 *            again in a second runtime (PG_TRACE_EVENTS=0) and a third (a CUPTI giving no
 *            external correlation: records are tied by when their call was made);
 *   gpu      the same checks on real GPUs with the toolkit's CUPTI (tests/gpu/cupti.sh; the
 *            clocks' mapping gets PG_TEST_SLACK_NS of slack, 50 us unless set);
 *   missing  the fake driver with no CUPTI (PG_CUPTI_PATH names nothing): the trace works as
 *            without the feature, and says "gpu timeline: unavailable (CUPTI not found ...)";
 *   refuse   the fake CUPTI refusing to record (FAKE_CUPTI_REFUSE=1: profiling reserved to
 *            administrators): unavailable, with CUPTI's reason;
 *   host     CPU devices: unavailable (no GPU), the trace as before.
 * Usage: test_cupti_double MODE */
#define _POSIX_C_SOURCE 200809L
#include "tests/c/kernels_common.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { N = 4096 };

static char dir[64], trace_path[128];
static uint64_t slack;

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s)
        s[n] = 0;
    fclose(f);
    return s;
}

static pg_runtime *open_runtime(const char *devices) {
    pg_options o;
    pg_options_init(&o);
    o.devices = devices;
    o.policy = "round-robin"; /* both GPUs where there are two: peer copies between them */
    o.cache_dir = dir;
    o.trace = trace_path;
    pg_runtime *rt = NULL;
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    return rt;
}

/* A host write, kernels on each device, copies host to device, between devices, back. */
static void workload(pg_runtime *rt) {
    pg_kernel *fill = test_kernel(rt, "fill", NULL), *add1 = test_kernel(rt, "add1", NULL);
    pg_kernel *sum2 = test_kernel(rt, "sum2", NULL);
    pg_array *x = test_array(rt, N), *y = test_array(rt, N), *z = test_array(rt, N);
    pg_array *w = test_array(rt, N);
    static float host[N];
    for (int i = 0; i < N; i++)
        host[i] = (float)i;
    REQUIRE_OK(pg_array_write(x, 0, N, host));
    pg_arg fa[] = {pg_arg_array(y), pg_arg_float(2.0f), pg_arg_int(N)};
    REQUIRE_OK(pg_kernel_launch(fill, dim1(N / 256), dim1(256), 0, fa, 3));
    pg_arg aa[] = {pg_arg_array(z), pg_arg_array(x), pg_arg_int(N)};
    REQUIRE_OK(pg_kernel_launch(add1, dim1(N / 256), dim1(256), 0, aa, 3));
    pg_arg sa[] = {pg_arg_array(w), pg_arg_array(y), pg_arg_array(z), pg_arg_int(N)};
    REQUIRE_OK(pg_kernel_launch(sum2, dim1(N / 256), dim1(256), 0, sa, 4));
    REQUIRE_OK(pg_array_read(w, 0, N, host));
    for (int i = 0; i < N; i++)
        if (host[i] != 2.0f + (float)i + 1.0f) {
            fprintf(stderr, "w[%d] = %g, expected %g\n", i, host[i], 3.0 + i);
            pg_check_failures++;
            break;
        }
    REQUIRE_OK(pg_runtime_sync(rt));
}

/* Every kernel and copy vertex on a GPU has its span; each span is where and when it should
 * be. t_sync: the runtime's clock after the sync returned. */
static void check_spans(const pg_dag *g, uint64_t t_sync) {
    const char *status = pg_dag_gpu_timeline(g);
    printf("gpu timeline: %s\n", status);
    CHECK(status && !strncmp(status, "available", 9));
    size_t ns = 0, nv = 0;
    CHECK_OK(pg_dag_gpu_span_count(g, &ns));
    CHECK_OK(pg_dag_vertex_count(g, &nv));
    pg_gpu_span *s = calloc(ns ? ns : 1, sizeof *s);
    for (size_t i = 0; i < ns; i++) {
        CHECK_OK(pg_dag_gpu_span(g, i, &s[i]));
        if (getenv("PG_TEST_VERBOSE"))
            printf("  span %llu %d dev %d stream %u %llu..%llu api %llu %s %s\n",
                   (unsigned long long)s[i].id, (int)s[i].kind, s[i].device, s[i].gpu_stream,
                   (unsigned long long)s[i].start_ns, (unsigned long long)s[i].end_ns,
                   (unsigned long long)s[i].api_ns, s[i].copy_kind, s[i].name);
    }
    pg_gpu_span out;
    CHECK_MSG(pg_dag_gpu_span(g, ns, &out), PG_ERROR_ARGUMENT, "out of range");
    int kernels = 0, copies = 0;
    int64_t worst_submit = INT64_MAX, worst_api = INT64_MAX;
    for (size_t i = 0; i < nv; i++) {
        pg_dag_vertex_info v;
        CHECK_OK(pg_dag_vertex(g, i, &v));
        if (v.device < 0 || (v.kind != PG_DAG_KERNEL && v.kind != PG_DAG_COPY))
            continue;
        int found = 0;
        for (size_t j = 0; j < ns; j++) {
            const pg_gpu_span *x = &s[j];
            if (x->id != v.id)
                continue;
            found++;
            /* A peer copy may be reported on either GPU (CUPTI's deviceId of a PtoP record). */
            CHECK(x->device == v.device ||
                  (v.kind == PG_DAG_COPY && (x->device == v.src || x->device == v.dst)));
            CHECK(x->kind == (v.kind == PG_DAG_KERNEL ? PG_GPU_KERNEL : PG_GPU_COPY));
            CHECK(x->end_ns >= x->start_ns && x->start_ns > 0);
            CHECK(x->start_ns + slack >= v.submit_ns); /* ran after the script submitted it */
            CHECK(x->end_ns <= t_sync + slack);        /* and was done when the sync returned */
            if ((int64_t)(x->start_ns - v.submit_ns) < worst_submit)
                worst_submit = (int64_t)(x->start_ns - v.submit_ns);
            CHECK(x->api_ns > 0); /* the driver call that enqueued it is known */
            if (x->api_ns) {
                CHECK(x->api_ns + slack >= v.submit_ns && x->api_ns <= x->start_ns + slack);
                if ((int64_t)(x->start_ns - x->api_ns) < worst_api)
                    worst_api = (int64_t)(x->start_ns - x->api_ns);
            }
            if (v.kind == PG_DAG_COPY) {
                const char *want = v.src == PG_HOST ? "HtoD" : v.dst == PG_HOST ? "DtoH" : NULL;
                if (want)
                    CHECK(!strcmp(x->copy_kind, want));
                else
                    CHECK(!strcmp(x->copy_kind, "PtoP") || !strcmp(x->copy_kind, "DtoD"));
                CHECK(x->bytes == v.bytes);
            }
        }
        if (!found)
            fprintf(stderr, "vertex %llu (%s, device %d) has no GPU span\n",
                    (unsigned long long)v.id, v.name, v.device);
        CHECK(found >= 1);
        kernels += found && v.kind == PG_DAG_KERNEL;
        copies += found && v.kind == PG_DAG_COPY;
    }
    printf("%zu spans: %d kernel and %d copy vertices matched; GPU start - submission >= %lld ns, "
           "GPU start - driver call >= %lld ns\n",
           ns, kernels, copies, (long long)worst_submit, (long long)worst_api);
    CHECK(kernels >= 3 && copies >= 2); /* fill, add1, sum2; x to its GPU, w to the host */
    /* One stream runs one thing at a time: its spans, in start order, do not overlap. */
    for (size_t i = 0; i < ns; i++)
        for (size_t j = i + 1; j < ns; j++)
            if (s[j].device == s[i].device && s[j].gpu_stream == s[i].gpu_stream) {
                CHECK(s[j].start_ns >= s[i].start_ns);
                CHECK(s[j].start_ns + slack >= s[i].end_ns);
                break; /* the next one on that stream */
            }
    free(s);
}

static void check_trace_file(int available, const char *reason) {
    char *t = slurp(trace_path);
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK(strstr(t, "\"traceEvents\"") != NULL);
    CHECK(strstr(t, "\"cat\":\"kernel\"") != NULL); /* the host's view, as before */
    CHECK(strstr(t, "\"otherData\":{\"gpu_timeline\":") != NULL);
    if (available) {
        CHECK(strstr(t, "\"name\":\"gpu 0 stream ") != NULL);
        CHECK(strstr(t, "\"cat\":\"gpu_kernel\"") != NULL);
        CHECK(strstr(t, "\"cat\":\"gpu_copy\"") != NULL);
        CHECK(strstr(t, "gpu timeline: available") != NULL);
    } else {
        CHECK(strstr(t, "gpu_kernel") == NULL);
        CHECK(strstr(t, "gpu timeline: unavailable (") != NULL);
        if (!strstr(t, reason))
            fprintf(stderr, "the trace does not say '%s'\n", reason);
        CHECK(strstr(t, reason) != NULL);
    }
    free(t);
}

static int run(const char *mode) {
    int gpu = !strcmp(mode, "gpu"), fake = !strcmp(mode, "fake"), host = !strcmp(mode, "host");
    pg_runtime *rt = open_runtime(host ? "host:2" : "cuda");
    workload(rt);
    uint64_t t_sync = 0;
    CHECK_OK(pg_runtime_clock(rt, &t_sync));
    pg_dag *g = NULL;
    REQUIRE_OK(pg_dag_snapshot(rt, &g));
    const char *reason = !strcmp(mode, "missing")  ? "CUPTI not found"
                         : !strcmp(mode, "refuse") ? "administrators"
                                                   : "no GPU: host devices";
    if (gpu || fake) {
        check_spans(g, t_sync);
        char *json = NULL;
        CHECK_OK(pg_dag_to_string(g, PG_DAG_JSON, &json));
        CHECK(json && strstr(json, "\"gpu_spans\":[\n{\"id\":") &&
              strstr(json, "\"gpu_timeline\""));
        pg_string_free(json);
    } else {
        const char *st = pg_dag_gpu_timeline(g);
        printf("gpu timeline: %s\n", st);
        size_t ns = 1;
        CHECK_OK(pg_dag_gpu_span_count(g, &ns));
        CHECK(ns == 0);
        CHECK(st && !strncmp(st, "unavailable (", 13) && strstr(st, reason));
        /* The host's view is whole: every kernel timed as before. */
        size_t nv = 0;
        CHECK_OK(pg_dag_vertex_count(g, &nv));
        int timed = 0;
        for (size_t i = 0; i < nv; i++) {
            pg_dag_vertex_info v;
            CHECK_OK(pg_dag_vertex(g, i, &v));
            timed += v.kind == PG_DAG_KERNEL && v.end_ns > 0;
        }
        CHECK(timed == 3);
    }
    CHECK(pg_dag_gpu_timeline(NULL) == NULL);
    CHECK_STATUS(pg_dag_gpu_span_count(NULL, NULL), PG_ERROR_ARGUMENT);
    pg_dag_free(g);
    CHECK_OK(pg_runtime_free(rt)); /* writes the trace */
    check_trace_file(gpu || fake, reason);
    if (fake) { /* every correlation pushed was popped */
        void *h = dlopen(getenv("PG_CUPTI_PATH"), RTLD_NOW | RTLD_NOLOAD);
        int (*depth)(void) = h ? (int (*)(void))dlsym(h, "fake_cupti_depth") : NULL;
        CHECK(depth && depth() == 0);
        /* A second runtime after the first closed records again, and only its own work; with
         * PG_TRACE_EVENTS=0 its kernels are timed by the GPU's rows alone (no timing events). */
        setenv("PG_TRACE_EVENTS", "0", 1);
        rt = open_runtime("cuda");
        workload(rt);
        CHECK_OK(pg_runtime_clock(rt, &t_sync));
        REQUIRE_OK(pg_dag_snapshot(rt, &g));
        check_spans(g, t_sync);
        size_t nv = 0;
        CHECK_OK(pg_dag_vertex_count(g, &nv));
        for (size_t i = 0; i < nv; i++) {
            pg_dag_vertex_info v;
            CHECK_OK(pg_dag_vertex(g, i, &v));
            if (v.kind == PG_DAG_KERNEL)
                CHECK(v.end_ns == 0); /* untimed on the host's rows */
        }
        unsetenv("PG_TRACE_EVENTS");
        pg_dag_free(g);
        CHECK_OK(pg_runtime_free(rt));
        /* A CUPTI that gives no external correlation: each record's driver call began while
         * its computation was being issued, which ties it just as well. */
        setenv("FAKE_CUPTI_NO_EXTERNAL", "1", 1);
        rt = open_runtime("cuda");
        workload(rt);
        CHECK_OK(pg_runtime_clock(rt, &t_sync));
        REQUIRE_OK(pg_dag_snapshot(rt, &g));
        check_spans(g, t_sync);
        unsetenv("FAKE_CUPTI_NO_EXTERNAL");
        pg_dag_free(g);
        CHECK_OK(pg_runtime_free(rt));
    }
    if (gpu)
        printf("trace: %s\n", trace_path);
    CHECK_DONE();
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "fake") && strcmp(mode, "gpu") && strcmp(mode, "missing") &&
        strcmp(mode, "refuse") && strcmp(mode, "host")) {
        fprintf(stderr, "usage: test_cupti_double fake|gpu|missing|refuse|host\n");
        return 2;
    }
    const char *sl = getenv("PG_TEST_SLACK_NS");
    slack = sl ? strtoull(sl, NULL, 10) : !strcmp(mode, "gpu") ? 50000 : 0;
    snprintf(dir, sizeof dir, "/tmp/pg-cupti-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    const char *keep = getenv("PG_TEST_TRACE");
    if (keep && *keep)
        snprintf(trace_path, sizeof trace_path, "%s", keep);
    else
        snprintf(trace_path, sizeof trace_path, "%s/trace.json", dir);
    int rc = run(mode);
    if (!(keep && *keep))
        unlink(trace_path);
    return rc;
}
