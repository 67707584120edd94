/* launch_overhead.c: submit overhead per launch — an empty kernel with 4 arguments launched
 * through pg_kernel_launch, median of many. On GPUs it also times a raw launch loop through the
 * backend's own launch path in the same process, same stream count, as the baseline.
 * Usage: launch_overhead [devices] [launches]   (defaults: PG_DEVICES or host:1, 20000) */
#include "bench_stats.h"
#include "core/handle.h"
#include "core/util.h"
#include "core/phases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *SRC = "extern \"C\" __global__ void empty(float *a, const float *b, int n, "
                         "float s) { if (n < 0) a[0] = b[0] * s; }\n";

enum { BURST = 64 };

/* Wait for everything on s (the raw loop has no runtime to sync). */
static void drain(pg__runtime *r, pg__stream *s) {
    pg__bevent *e;
    if (r->ops->event_record(r->b, s->b, &e) == PG_OK) {
        r->ops->event_wait(r->b, e);
        r->ops->event_free(r->b, e);
    }
}

int main(int argc, char **argv) {
    const char *devices = argc > 1               ? argv[1]
                          : getenv("PG_DEVICES") ? getenv("PG_DEVICES")
                                                 : "host:1";
    int n = argc > 2 ? atoi(argv[2]) : 20000;
    pg_options o;
    pg_options_init(&o);
    o.devices = devices;
    pg_runtime *rt;
    if (pg_runtime_new(&o, &rt) != PG_OK) {
        fprintf(stderr, "runtime: %s\n", pg_last_error());
        return 1;
    }
    pg_kernel *k;
    int64_t len = 256;
    pg_array *a, *b;
    if (pg_kernel_new(rt, SRC, "empty", NULL, NULL, &k) ||
        pg_array_new(rt, PG_FLOAT32, 1, &len, &a) || pg_array_new(rt, PG_FLOAT32, 1, &len, &b)) {
        fprintf(stderr, "setup: %s\n", pg_last_error());
        return 1;
    }
    pg_dim3 g = {1, 1, 1}, blk = {32, 1, 1};
    pg_arg args[] = {pg_arg_array(a), pg_arg_array(b), pg_arg_int(256), pg_arg_float(2.0f)};
    double *t = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < 1000; i++) /* warm-up: buffers, streams, module load */
        pg_kernel_launch(k, g, blk, 0, args, 4);
    pg_runtime_sync(rt);
    pg__phases_reset();
    /* Submit cost: bursts short enough that the device's launch queue never fills (a full
     * queue makes every launch wait for the device, which times the device, not the submit
     * path); the device drains between bursts, untimed. */
    for (int i = 0; i < n; i++) {
        uint64_t t0 = pg__now_ns();
        if (pg_kernel_launch(k, g, blk, 0, args, 4)) {
            fprintf(stderr, "launch: %s\n", pg_last_error());
            return 1;
        }
        t[i] = (double)(pg__now_ns() - t0) / 1e3;
        if (i % BURST == BURST - 1)
            pg_runtime_sync(rt);
    }
    pg_runtime_sync(rt);
    double med = bench_median(t, n);
    int phases = pg__phases_report(stdout, "phases, bursts of 64");
    /* Throughput: back to back, the queue full; bounded by the device on GPUs. */
    uint64_t all0 = pg__now_ns();
    for (int i = 0; i < n; i++)
        pg_kernel_launch(k, g, blk, 0, args, 4);
    pg_runtime_sync(rt);
    double total = (double)(pg__now_ns() - all0) / 1e3 / n;
    if (phases)
        pg__phases_report(stdout, "phases, back to back");
    printf("devices=%s launches=%d polygpu submit median %.2f us (bursts of %d), back-to-back %.2f "
           "us/launch\n",
           devices, n, med, BURST, total);

    /* Baseline: the backend's launch on one stream, no runtime in between (GPU: cuLaunchKernel). */
    pg__runtime *r = pg__handle_get((uint64_t)(uintptr_t)rt, PG__H_RUNTIME);
    pg__stream *s = r->dev[0].streams[0];
    pg__kernel *kk = pg__handle_get((uint64_t)(uintptr_t)k, PG__H_KERNEL);
    uint64_t slots[4] = {
        (uint64_t)(uintptr_t)((pg__array *)pg__handle_get((uint64_t)(uintptr_t)a, PG__H_ARRAY))
            ->dev[0],
        (uint64_t)(uintptr_t)((pg__array *)pg__handle_get((uint64_t)(uintptr_t)b, PG__H_ARRAY))
            ->dev[0],
        256, 0};
    float two = 2.0f;
    memcpy(&slots[3], &two, sizeof two);
    for (int i = 0; i < n; i++) {
        uint64_t t0 = pg__now_ns();
        r->ops->launch(r->b, s->b, kk->fn[0], g, blk, 0, slots, 4, NULL);
        t[i] = (double)(pg__now_ns() - t0) / 1e3;
        if (i % BURST == BURST - 1)
            drain(r, s);
    }
    drain(r, s);
    double raw = bench_median(t, n);
    all0 = pg__now_ns();
    for (int i = 0; i < n; i++)
        r->ops->launch(r->b, s->b, kk->fn[0], g, blk, 0, slots, 4, NULL);
    drain(r, s);
    double raw_total = (double)(pg__now_ns() - all0) / 1e3 / n;
    printf("devices=%s launches=%d raw backend launch median %.2f us (bursts of %d), back-to-back "
           "%.2f us/launch\n",
           devices, n, raw, BURST, raw_total);
    printf("ratio polygpu/raw: submit median %.2f, back-to-back %.2f\n", med / raw,
           total / raw_total);
    /* What the submit path spends in the backend besides the launch: one event per computation
     * (record) and completion queries. */
    for (int i = 0; i < n; i++) {
        pg__bevent *ev;
        uint64_t t0 = pg__now_ns();
        r->ops->event_record(r->b, s->b, &ev);
        t[i] = (double)(pg__now_ns() - t0) / 1e3;
        r->ops->event_free(r->b, ev);
    }
    double rec = bench_median(t, n);
    pg__bevent *probe;
    r->ops->launch(r->b, s->b, kk->fn[0], g, blk, 0, slots, 4, NULL);
    r->ops->event_record(r->b, s->b, &probe);
    for (int i = 0; i < n; i++) {
        uint64_t t0 = pg__now_ns();
        (void)r->ops->event_done(r->b, probe);
        t[i] = (double)(pg__now_ns() - t0) / 1e3;
    }
    r->ops->event_free(r->b, probe);
    printf("backend event record median %.2f us, event query median %.2f us\n", rec,
           bench_median(t, n));
    free(t);
    pg_runtime_free(rt);
    return 0;
}
