/* copy_bandwidth.c: a 256 MiB array moved host->device, device->host and device->device by the
 * runtime (the copies coherence issues for kernels and host reads), each copy timed by the
 * backend's events (the DAG's start_ns/end_ns), against the link bandwidth that
 * polygpu-bandwidth's measurement gives in the same process. Target: >= 90% of the link.
 * Usage: copy_bandwidth [devices] [MiB] [reps]   (defaults: PG_DEVICES or cuda, 256, 5) */
#include "polygpu.h"

#include <stdio.h>
#include <stdlib.h>

static const char *SRC =
    "extern \"C\" __global__ void touch(const float *x, int n) { if (n < 0) ((float *)x)[0] = 0; "
    "}\n"
    "extern \"C\" __global__ void produce(float *y, int n) { if (n < 0) y[0] = 1; }\n";

/* A device policy that runs every kernel where the benchmark says: the links are chosen, not
 * left to a scheduling policy. */
static int target;
static int pick(void *state, const pg_policy_view *v) {
    (void)state;
    (void)v;
    return target;
}

#define DIE(what)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "%s: %s\n", what, pg_last_error());                                        \
        exit(1);                                                                                   \
    } while (0)

/* Sum of the durations (ns) and bytes of the copies src->dst in the DAG (PG_HOST or a device
 * id). */
static void copies(const pg_dag *dag, int src, int dst, double *ns, double *bytes, int *count) {
    *ns = *bytes = 0;
    *count = 0;
    size_t n = 0;
    pg_dag_vertex_count(dag, &n);
    for (size_t i = 0; i < n; i++) {
        pg_dag_vertex_info v;
        if (pg_dag_vertex(dag, i, &v) || v.kind != PG_DAG_COPY)
            continue;
        if (v.src == src && v.dst == dst && v.end_ns > v.start_ns &&
            (*count)++ > 0) { /* skip the warm-up's */
            *ns += (double)(v.end_ns - v.start_ns);
            *bytes += (double)v.bytes;
        }
    }
}

int main(int argc, char **argv) {
    const char *devices = argc > 1 ? argv[1] : getenv("PG_DEVICES") ? getenv("PG_DEVICES") : "cuda";
    long mib = argc > 2 ? atol(argv[2]) : 256;
    int reps = argc > 3 ? atoi(argv[3]) : 5;
    pg_device_policy pol = {NULL, pick, NULL};
    if (pg_policy_register("benchmark-target", &pol))
        DIE("policy");
    pg_options o;
    pg_options_init(&o);
    o.devices = devices;
    o.policy = "benchmark-target";
    o.parent_stream_policy = "multigpu-early-disjoint"; /* any device, not only the parents' */
    o.trace = "/dev/null"; /* copy times from the backend's timing events */
    o.interconnect = "default";
    pg_runtime *rt;
    if (pg_runtime_new(&o, &rt))
        DIE("runtime");
    int ndev = 0;
    pg_runtime_devices(rt, NULL, 0, &ndev);
    /* The link figures polygpu-bandwidth gives, same size, measured here. */
    if (pg_runtime_measure_interconnect(rt, (size_t)mib << 20, 10, "", NULL, 0))
        DIE("measure");
    static double link[(PG_MAX_DEVICES + 1) * (PG_MAX_DEVICES + 1)];
    int nloc;
    pg_runtime_interconnect(rt, &nloc, link, NULL);

    pg_kernel *touch, *produce;
    if (pg_kernel_new(rt, SRC, "touch", "in const float *x, int n", NULL, &touch) ||
        pg_kernel_new(rt, SRC, "produce", "out float *y, int n", NULL, &produce))
        DIE("kernel");
    int64_t n = (int64_t)mib << 18; /* floats */
    pg_array *a;
    if (pg_array_new(rt, PG_FLOAT32, 1, &n, &a))
        DIE("array");
    float one = 1.0f;
    pg_dim3 g = {1, 1, 1}, b = {1, 1, 1};
    pg_arg args[] = {pg_arg_array(a), pg_arg_int((int)(n & 0x7fffffff))};
    for (int r = 0; r < reps + 1; r++) { /* the first round warms up: pools, modules */
        /* host -> device 0: the host write leaves the host copy the only valid one */
        if (pg_array_write(a, 0, 1, &one))
            DIE("write");
        target = 0;
        if (pg_kernel_launch(touch, g, b, 0, args, 2))
            DIE("launch");
        /* device 0 -> host: a kernel writes on device 0, the host reads */
        if (pg_kernel_launch(produce, g, b, 0, args, 2) || pg_array_read(a, 0, 1, &one))
            DIE("read");
        if (ndev > 1) { /* device 0 -> device 1 */
            target = 0;
            if (pg_kernel_launch(produce, g, b, 0, args, 2))
                DIE("launch");
            target = 1;
            if (pg_kernel_launch(touch, g, b, 0, args, 2))
                DIE("launch");
        }
        if (pg_runtime_sync(rt))
            DIE("sync");
    }
    pg_dag *dag;
    if (pg_dag_snapshot(rt, &dag))
        DIE("dag");
    struct {
        const char *name;
        int src, dst;
    } links[] = {{"host->dev0", -1, 0}, {"dev0->host", 0, -1}, {"dev0->dev1", 0, 1}};
    printf("devices=%s array=%ld MiB reps=%d (after one warm-up round)\n", devices, mib, reps);
    for (int i = 0; i < 3; i++) {
        if (links[i].dst == 1 && ndev < 2)
            continue;
        double ns, bytes;
        int count;
        copies(dag, links[i].src, links[i].dst, &ns, &bytes, &count);
        count--;
        if (count < 1) {
            printf("%-11s no timed copies\n", links[i].name);
            continue;
        }
        double gbps = bytes / ns; /* bytes per ns = GB/s */
        double ref = link[(links[i].src + 1) * nloc + links[i].dst + 1];
        printf("%-11s runtime %7.1f GB/s over %d copies; link (polygpu-bandwidth) %7.1f GB/s; "
               "ratio %.3f\n",
               links[i].name, gbps, count, ref, gbps / ref);
    }
    pg_dag_free(dag);
    pg_array_free(a);
    pg_kernel_free(touch);
    pg_kernel_free(produce);
    return pg_runtime_free(rt) == PG_OK ? 0 : 1;
}
