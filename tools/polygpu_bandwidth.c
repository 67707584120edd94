/* polygpu-bandwidth: measure latency and bandwidth host->GPU, GPU->host and every GPU->GPU
 * pair with the runtime's own copy path, print the matrix, and save it (CSV) where every
 * runtime on these GPUs will find it: the cache folder, under a name derived from the GPUs'
 * UUIDs. Run it once per machine for the full-size figures; without it a runtime measures a
 * quick version at its first start. */
#include "polygpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f) {
    fputs("usage: polygpu-bandwidth [--devices SPEC] [--bytes N] [--reps N] [--output PATH]\n"
          "  --devices  cuda (default), cuda:0,2, host:N ...\n"
          "  --bytes    size of each timed copy (default 268435456, 256 MiB)\n"
          "  --reps     timed copies per link (default 10)\n"
          "  --output   CSV to write (default: the runtime's cache file for these devices)\n",
          f);
}

static int parse_size(const char *s, size_t *out) {
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || *end || v < 8)
        return 0;
    *out = (size_t)v;
    return 1;
}

static void loc_name(int loc, char *out, size_t cap) {
    if (loc)
        snprintf(out, cap, "dev%d", loc - 1);
    else
        snprintf(out, cap, "host");
}

int main(int argc, char **argv) {
    const char *devices = "cuda", *output = NULL;
    size_t bytes = (size_t)256 << 20;
    int reps = 10;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        }
        if (!v) {
            fprintf(stderr, "polygpu-bandwidth: %s needs a value\n", a);
            usage(stderr);
            return 2;
        }
        i++;
        if (!strcmp(a, "--devices"))
            devices = v;
        else if (!strcmp(a, "--output"))
            output = v;
        else if (!strcmp(a, "--bytes") && parse_size(v, &bytes))
            ;
        else if (!strcmp(a, "--reps") && (reps = atoi(v)) >= 1)
            ;
        else {
            fprintf(stderr, "polygpu-bandwidth: bad argument %s %s\n", a, v);
            usage(stderr);
            return 2;
        }
    }
    pg_options o;
    pg_options_init(&o);
    o.devices = devices;
    o.interconnect = "default"; /* no quick measurement at start: we measure in full below */
    pg_runtime *rt;
    if (pg_runtime_new(&o, &rt) != PG_OK) {
        fprintf(stderr, "polygpu-bandwidth: %s\n", pg_last_error());
        return 1;
    }
    pg_device_info info[PG_MAX_DEVICES];
    int ndev = 0;
    pg_runtime_devices(rt, info, PG_MAX_DEVICES, &ndev);
    for (int d = 0; d < ndev && d < PG_MAX_DEVICES; d++)
        printf("dev%d: %s %s\n", d, info[d].name, info[d].uuid);
    char saved[1200];
    if (pg_runtime_measure_interconnect(rt, bytes, reps, output, saved, sizeof saved) != PG_OK) {
        fprintf(stderr, "polygpu-bandwidth: %s\n", pg_last_error());
        pg_runtime_free(rt);
        return 1;
    }
    static double gbps[(PG_MAX_DEVICES + 1) * (PG_MAX_DEVICES + 1)];
    static double lat[(PG_MAX_DEVICES + 1) * (PG_MAX_DEVICES + 1)];
    int n = 0;
    pg_runtime_interconnect(rt, &n, gbps, lat);
    printf("\nbandwidth GB/s (row: from, column: to), %zu-byte copies x %d\n%8s", bytes, reps, "");
    char name[16];
    for (int d = 0; d < n; d++) {
        loc_name(d, name, sizeof name);
        printf("%9s", name);
    }
    for (int s = 0; s < n; s++) {
        loc_name(s, name, sizeof name);
        printf("\n%8s", name);
        for (int d = 0; d < n; d++)
            s == d ? printf("%9s", "-") : printf("%9.1f", gbps[s * n + d]);
    }
    printf("\n\nlatency us (one 8-byte copy, issued and waited for)\n%8s", "");
    for (int d = 0; d < n; d++) {
        loc_name(d, name, sizeof name);
        printf("%9s", name);
    }
    for (int s = 0; s < n; s++) {
        loc_name(s, name, sizeof name);
        printf("\n%8s", name);
        for (int d = 0; d < n; d++)
            s == d ? printf("%9s", "-") : printf("%9.1f", lat[s * n + d]);
    }
    printf("\n\nsaved %s\n", saved);
    return pg_runtime_free(rt) == PG_OK ? 0 : 1;
}
