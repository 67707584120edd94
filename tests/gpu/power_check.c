/* power_check.c: power and energy on real GPUs, read through NVML (run by tests/gpu/run.sh; any
 * machine with the NVIDIA driver). Prints, per GPU, the power the budget counts (the default
 * power limit before any work, then the highest NVML reading seen under load), the energy
 * counter before and after a busy loop of about `seconds` on every GPU at once and the average
 * power that makes, then the device set chosen for two budgets. Exits 1 when a figure is
 * missing or implausible (no energy counter, no increase, an average power outside 5 W ..
 * 1.5 x the counted power), 2 when NVML is absent (the figures are then unknown, as documented).
 * Usage: power_check [seconds (default 5) [devices (default cuda) [power_watts]]]: the last two
 * try the program's own logic on CPU devices with injected figures (host:2 100), which measures
 * nothing. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "polygpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char *BURN =
    "extern \"C\" __global__ void burn(float *a, long long cycles) {\n"
    "  long long t0 = clock64(); int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  float x = a[i];\n"
    "  while (clock64() - t0 < cycles) { x = x * 0.999999f + 0.5f; x = x * 1.000001f - 0.25f; }\n"
    "  a[i] = x; }\n";

#define DIE(st)                                                                                    \
    do {                                                                                           \
        fprintf(stderr, "power_check: line %d: %s: %s\n", __LINE__, pg_status_name(st),            \
                pg_last_error());                                                                  \
        return 1;                                                                                  \
    } while (0)

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void print_choice(pg_runtime *rt) {
    pg_power_choice c;
    if (pg_runtime_power_choice(rt, &c)) {
        printf("  (no choice: %s)\n", pg_last_error());
        return;
    }
    printf("  budget %.1f W: devices", c.limit_watts);
    for (int i = 0; i < c.nchosen; i++)
        printf(" %d", c.chosen[i]);
    printf(" (%.1f W), performance per watt from %s\n", c.used_watts,
           c.from_models ? "the models" : "nominal throughput (SMs x clock)");
    for (int d = 0; d < c.ndevices; d++)
        printf("    device %d: %.1f W, performance %.4g, %.4g per W\n", d, c.watts[d],
               c.performance[d], c.watts[d] > 0 ? c.performance[d] / c.watts[d] : 0);
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 5;
    const char *devices = argc > 2 ? argv[2] : "cuda", *watts = argc > 3 ? argv[3] : NULL;
    pg_options o;
    pg_options_init(&o);
    o.devices = devices;
    o.power_watts = watts;
    o.policy = "round-robin";
    pg_runtime *rt;
    pg_status st = pg_runtime_new(&o, &rt);
    if (st)
        DIE(st);
    pg_device_info info[PG_MAX_DEVICES];
    int n = 0;
    if ((st = pg_runtime_devices(rt, info, PG_MAX_DEVICES, &n)))
        DIE(st);
    pg_stats s0, s1;
    if ((st = pg_runtime_stats(rt, &s0)))
        DIE(st);
    int nvml = 0;
    for (int d = 0; d < n; d++) {
        printf("device %d: %s %s, %d SMs at %u kHz; power counted before work %.1f W; energy "
               "%s\n",
               d, info[d].name, info[d].uuid, info[d].multiprocessors, info[d].clock_khz,
               s0.power_watts[d], s0.energy_joules[d] >= 0 ? "known" : "UNKNOWN");
        nvml += s0.power_watts[d] > 0;
    }
    if (!nvml) {
        printf("NVML gives no figure on this machine (absent or not serving these GPUs): power "
               "and energy unknown\n");
        pg_runtime_free(rt);
        return 2;
    }

    /* The busy loop: each GPU gets launches of ~0.1 s filling every SM, for `seconds`. */
    pg_kernel *k;
    if ((st = pg_kernel_new(rt, BURN, "burn", NULL, NULL, &k)))
        DIE(st);
    pg_array *a[PG_MAX_DEVICES];
    int launches = (int)(seconds / 0.1 + 0.5);
    for (int d = 0; d < n; d++) {
        int64_t len = (int64_t)info[d].multiprocessors * 4 * 256;
        if ((st = pg_array_new(rt, PG_FLOAT32, 1, &len, &a[d])))
            DIE(st);
    }
    double t0 = now_s();
    for (int i = 0; i < launches; i++)
        for (int d = 0; d < n; d++) { /* round-robin: launch d of each round goes to GPU d */
            /* ~0.1 s: clock cycles on a GPU; on a CPU device clock64 counts ns and one thread
             * spins (its blocks run one after another) */
            int gpu = info[d].kind == PG_DEVICE_CUDA;
            pg_dim3 grid = {gpu ? (uint32_t)info[d].multiprocessors * 4 : 1, 1, 1},
                    block = {gpu ? 256 : 1, 1, 1};
            long long cycles =
                gpu ? (long long)(info[d].clock_khz ? info[d].clock_khz : 1500000) * 100
                    : 100000000;
            pg_arg args[2] = {pg_arg_array(a[d]), pg_arg_int(cycles)};
            if ((st = pg_kernel_launch(k, grid, block, 0, args, 2)))
                DIE(st);
        }
    if ((st = pg_runtime_sync(rt)))
        DIE(st);
    double t1 = now_s();
    if ((st = pg_runtime_stats(rt, &s1)))
        DIE(st);
    int bad = 0;
    printf("busy loop: %d launches per GPU, %.2f s\n", launches, t1 - t0);
    for (int d = 0; d < n; d++) {
        double e = s1.energy_joules[d] - s0.energy_joules[d];
        double avg = e / (t1 - t0);
        printf("device %d: energy %.3f J -> %.3f J (+%.3f J), average %.1f W; power counted now "
               "%.1f W\n",
               d, s0.energy_joules[d], s1.energy_joules[d], e, avg, s1.power_watts[d]);
        if (s0.energy_joules[d] < 0 || !(e > 0) || avg < 5 || avg > 1.5 * s1.power_watts[d]) {
            printf("  FAILED: device %d's energy is missing or implausible\n", d);
            bad = 1;
        }
    }

    /* Budgets: the smallest GPU's power fits one GPU; one watt less fits none. */
    double smallest = 0;
    for (int d = 0; d < n; d++)
        if (smallest == 0 || s0.power_watts[d] < smallest)
            smallest = s0.power_watts[d];
    pg_runtime_free(rt);
    double budgets[2] = {smallest * (n > 1 ? 1.5 : 1.0), smallest - 1};
    for (int i = 0; i < 2; i++) {
        pg_options_init(&o);
        o.devices = devices;
        o.power_watts = watts;
        o.power_limit = budgets[i];
        st = pg_runtime_new(&o, &rt);
        if (st) {
            printf("budget %.1f W: %s: %s\n", budgets[i], pg_status_name(st), pg_last_error());
            bad |= i == 0; /* the first must fit a GPU; the second must not */
            continue;
        }
        print_choice(rt);
        bad |= i == 1;
        pg_runtime_free(rt);
    }
    printf("power_check: %s\n", bad ? "FAILED" : "ok");
    return bad;
}
