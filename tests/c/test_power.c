/* test_power.c: power and energy per device, and the device set a power budget allows.
 * - pg__power_device_watts through either runtime pointer; option power_watts' syntax and range;
 * - Czarnul's greedy rule over scripted figures (several budgets and performance mixes);
 * - power_limit on host:4 with injected watts: the chosen set, and every kernel placed in it;
 * - performance mixes end to end on a simulated machine of two GPU types: nominal (SMs) and,
 *   from a second runtime sharing the cache folder, the performance models;
 * - errors: a budget no device fits (naming the smallest power), unknown power under a budget,
 *   a bad option; the next runtime works;
 * - energy in pg_stats: -1 where unknown, 0 on an idle device, and on CPU devices injected
 *   watts x busy time: growing with work, within what the wall clock allows. */
#include "kernels_common.h"
#include "core/power.h"
#include "core/handle.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static const char *SPIN_SRC =
    "extern \"C\" __global__ void spin(float *a, long long ns) {\n"
    "  struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);\n"
    "  long long t0 = t.tv_sec * 1000000000LL + t.tv_nsec, now;\n"
    "  do { clock_gettime(CLOCK_MONOTONIC, &t); now = t.tv_sec * 1000000000LL + t.tv_nsec; }\n"
    "  while (now - t0 < ns);\n"
    "  if (threadIdx.x == 0 && blockIdx.x == 0) a[0] += 1.0f; }\n";

static char tmpdir[256];

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static pg_status make(const char *devices, const char *watts, const char *limit, pg_runtime **rt) {
    pg_options o;
    pg_options_init(&o);
    pg_options_set(&o, "devices", devices);
    if (watts)
        pg_options_set(&o, "power_watts", watts);
    if (limit)
        pg_options_set(&o, "power_limit", limit);
    return pg_runtime_new(&o, rt);
}

/* The chosen devices, as a string "3,1" in the order taken. */
static const char *chosen(pg_runtime *rt, pg_power_choice *c) {
    static char s[64];
    CHECK_OK(pg_runtime_power_choice(rt, c));
    size_t n = 0;
    s[0] = 0;
    for (int i = 0; i < c->nchosen; i++)
        n += (size_t)snprintf(s + n, sizeof s - n, "%s%d", i ? "," : "", c->chosen[i]);
    return s;
}

static void watts_injected(void) {
    pg_runtime *rt;
    REQUIRE_OK(make("host:4", "0:120,1:80,3:40.5", NULL, &rt));
    CHECK(pg__power_device_watts(rt, 0) == 120);
    CHECK(pg__power_device_watts(rt, 1) == 80);
    CHECK(pg__power_device_watts(rt, 2) == 0); /* unknown */
    CHECK(pg__power_device_watts(rt, 3) == 40.5);
    CHECK(pg__power_device_watts(rt, 4) == 0); /* no such device */
    CHECK(pg__power_device_watts(rt, -1) == 0);
    /* the internal pointer, as core calls it with the lock held */
    pg__runtime *in = pg__enter_runtime(rt, "test");
    REQUIRE_OK(in ? PG_OK : PG_ERROR_STATE);
    CHECK(pg__power_device_watts(in, 1) == 80);
    pg__leave(in);
    pg_stats s;
    CHECK_OK(pg_runtime_stats(rt, &s));
    CHECK(s.power_watts[0] == 120 && s.power_watts[2] == 0 && s.power_watts[3] == 40.5);
    CHECK(s.energy_joules[2] == -1); /* no figure: unknown */
    CHECK(s.energy_joules[0] == 0);  /* a figure, nothing ran yet */
    CHECK(s.energy_joules[4] == -1); /* no such device */
    /* no budget: every device, in index order */
    pg_power_choice c;
    CHECK(!strcmp(chosen(rt, &c), "0,1,2,3"));
    CHECK(c.limit_watts == 0 && c.ndevices == 4 && !c.from_models);
    CHECK(c.watts[1] == 80 && c.performance[0] >= 1);
    CHECK_OK(pg_runtime_free(rt));

    REQUIRE_OK(make("host:3", "95", NULL, &rt));
    for (int d = 0; d < 3; d++)
        CHECK(pg__power_device_watts(rt, d) == 95);
    CHECK_OK(pg_runtime_free(rt));

    REQUIRE_OK(make("host:2", NULL, NULL, &rt));
    CHECK(pg__power_device_watts(rt, 0) == 0);
    CHECK_OK(pg_runtime_free(rt));
}

static void greedy(void) {
    int ch[PG_MAX_DEVICES], n;
    double used;
    /* equal performance: the lowest power first, while it fits */
    const double p1[] = {10, 10, 10, 10}, w1[] = {120, 80, 100, 40};
    pg__power_greedy(4, p1, w1, 200, ch, &n, &used);
    CHECK(n == 2 && ch[0] == 3 && ch[1] == 1 && used == 120); /* 100 W no longer fits in 80 */
    pg__power_greedy(4, p1, w1, 220, ch, &n, &used);
    CHECK(n == 3 && ch[0] == 3 && ch[1] == 1 && ch[2] == 2 && used == 220); /* exactly */
    pg__power_greedy(4, p1, w1, 1000, ch, &n, &used);
    CHECK(n == 4 && ch[3] == 0 && used == 340);
    pg__power_greedy(4, p1, w1, 40, ch, &n, &used);
    CHECK(n == 1 && ch[0] == 3);
    pg__power_greedy(4, p1, w1, 39, ch, &n, &used);
    CHECK(n == 0 && used == 0);
    /* a mix: the best per watt is not the fastest; the fastest does not fit what is left */
    const double p2[] = {100, 50, 30, 10}, w2[] = {250, 100, 100, 50};
    pg__power_greedy(4, p2, w2, 300, ch, &n, &used); /* 0.5, 0.3, 0.2 per W; 0.4 left out */
    CHECK(n == 3 && ch[0] == 1 && ch[1] == 2 && ch[2] == 3 && used == 250);
    pg__power_greedy(4, p2, w2, 350, ch, &n, &used);
    CHECK(n == 2 && ch[0] == 1 && ch[1] == 0 && used == 350);
    pg__power_greedy(4, p2, w2, 260, ch, &n, &used); /* 1, then 0 does not fit: 2 then 3 */
    CHECK(n == 3 && ch[0] == 1 && ch[1] == 2 && ch[2] == 3);
    /* ties per watt: the faster device first */
    const double p3[] = {1, 2}, w3[] = {1, 2};
    pg__power_greedy(2, p3, w3, 2.5, ch, &n, &used);
    CHECK(n == 1 && ch[0] == 1);
    /* no budget: all, in index order, whatever the figures */
    pg__power_greedy(4, p2, w2, 0, ch, &n, &used);
    CHECK(n == 4 && ch[0] == 0 && ch[3] == 3 && used == 500);
}

/* A budget on host:4: the chosen set, and kernels go only there. */
static void budget_places(void) {
    pg_runtime *rt;
    REQUIRE_OK(make("host:4", "0:120,1:80,2:100,3:40", "200", &rt));
    pg_power_choice c;
    CHECK(!strcmp(chosen(rt, &c), "3,1"));
    CHECK(c.limit_watts == 200 && c.used_watts == 120 && c.nchosen == 2);
    pg_kernel *k = test_kernel(rt, "fill", NULL);
    pg_array *a[16];
    for (int i = 0; i < 16; i++) {
        a[i] = test_array(rt, 256);
        pg_arg args[3] = {pg_arg_array(a[i]), pg_arg_double(1.0f), pg_arg_int(256)};
        CHECK_OK(pg_kernel_launch(k, dim1(2), dim1(128), 0, args, 3));
    }
    CHECK_OK(pg_runtime_sync(rt));
    pg_dag *dag = NULL;
    REQUIRE_OK(pg_dag_snapshot(rt, &dag));
    size_t nv = 0, kernels = 0;
    uint32_t used = 0;
    CHECK_OK(pg_dag_vertex_count(dag, &nv));
    for (size_t v = 0; v < nv; v++) {
        pg_dag_vertex_info vi;
        CHECK_OK(pg_dag_vertex(dag, v, &vi));
        if (vi.kind == PG_DAG_KERNEL) {
            kernels++;
            used |= 1u << vi.device;
        }
    }
    pg_dag_free(dag);
    CHECK(kernels == 16);
    CHECK(used == ((1u << 3) | (1u << 1))); /* both chosen devices, and only they */
    for (int i = 0; i < 16; i++)
        CHECK_OK(pg_array_free(a[i]));
    CHECK_OK(pg_kernel_free(k));
    CHECK_OK(pg_runtime_free(rt));

    /* a budget for one device: everything there, even under round-robin */
    pg_options o;
    pg_options_init(&o);
    o.devices = "host:4";
    o.policy = "round-robin";
    o.power_watts = "50";
    o.power_limit = 99;
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    CHECK(!strcmp(chosen(rt, &c), "0"));
    k = test_kernel(rt, "fill", NULL);
    for (int i = 0; i < 4; i++) {
        a[i] = test_array(rt, 64);
        pg_arg args[3] = {pg_arg_array(a[i]), pg_arg_double(2.0f), pg_arg_int(64)};
        CHECK_OK(pg_kernel_launch(k, dim1(1), dim1(64), 0, args, 3));
    }
    pg_stats s;
    CHECK_OK(pg_runtime_sync(rt));
    CHECK_OK(pg_runtime_stats(rt, &s));
    for (int d = 1; d < 4; d++)
        CHECK(s.energy_joules[d] == 0); /* never busy */
    CHECK(s.energy_joules[0] > 0);
    float v = 0;
    CHECK_OK(pg_array_read(a[3], 0, 1, &v));
    CHECK(v == 2.0f);
    CHECK_OK(pg_runtime_free(rt));
}

static void budget_errors(void) {
    pg_runtime *rt = NULL;
    CHECK_STATUS(make("host:4", "0:120,1:80,2:100,3:40", "39.5", &rt), PG_ERROR_ARGUMENT);
    CHECK(strstr(pg_last_error(), "fits no device") != NULL);
    CHECK(strstr(pg_last_error(), "smallest draws 40 W (device 3") != NULL);
    CHECK_STATUS(make("host:3", "0:120,2:100", "500", &rt), PG_ERROR_ARGUMENT);
    CHECK(strstr(pg_last_error(), "device 1 is unknown") != NULL);
    CHECK(strstr(pg_last_error(), "power_watts") != NULL);
    pg_options o;
    pg_options_init(&o);
    CHECK_STATUS(pg_options_set(&o, "power_limit", "-3"), PG_ERROR_ARGUMENT);
    CHECK_STATUS(pg_options_set(&o, "power_limit", "lots"), PG_ERROR_ARGUMENT);
    CHECK(strstr(pg_last_error(), "power_limit") != NULL);
    o.devices = "host:2";
    o.power_limit = 1.0 / 0.0;
    CHECK_STATUS(pg_runtime_new(&o, &rt), PG_ERROR_ARGUMENT);
    const char *bad[] = {"0:120,", "x", "0:-5", "0:", "1:80,1", "-1:50", "0:1e999", "0;120", "0"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK_STATUS(make("host:2", bad[i], NULL, &rt), PG_ERROR_ARGUMENT);
        CHECK(strstr(pg_last_error(), "power_watts") != NULL);
    }
    CHECK_STATUS(make("host:2", "0:10,2:30", NULL, &rt), PG_ERROR_ARGUMENT);
    CHECK(strstr(pg_last_error(), "names device 2") != NULL);
    /* the environment, as the bindings' users may set it */
    setenv("PG_POWER_LIMIT", "nope", 1);
    CHECK_STATUS(make("host:2", "10", NULL, &rt), PG_ERROR_ARGUMENT);
    setenv("PG_POWER_LIMIT", "15", 1);
    REQUIRE_OK(make("host:2", "10", NULL, &rt));
    pg_power_choice c;
    CHECK(!strcmp(chosen(rt, &c), "0") && c.limit_watts == 15);
    CHECK_OK(pg_runtime_free(rt));
    unsetenv("PG_POWER_LIMIT");
    /* after all that, a runtime works */
    REQUIRE_OK(make("host:2", "0:10,1:30", "45", &rt));
    CHECK(!strcmp(chosen(rt, &c), "0,1"));
    CHECK(pg__power_device_watts(rt, 1) == 30);
    CHECK_OK(pg_runtime_free(rt));
}

/* Two GPU types in one simulated machine: nominal throughput (SMs) against the models. */
static const char *TOPO = "name mixed\n"
                          "host memory_gbps=20 launch_us=3 copy_us=2.5\n"
                          "gpu_type big name=\"Big GPU\" memory=1G cc=8.0 sms=100 "
                          "memory_gbps=1000 kernel_us=2 max_shared=48K\n"
                          "gpu_type small name=\"Small GPU\" memory=1G cc=8.0 sms=25 "
                          "memory_gbps=500 kernel_us=2 max_shared=48K\n"
                          "gpus 2 big\n"
                          "gpus 2 small\n"
                          "link gpu0 host 24 0.6\nlink gpu1 host 24 0.6\n"
                          "link gpu2 host 24 0.6\nlink gpu3 host 24 0.6\n";

static pg_status make_sim(const char *topo, const char *models, const char *limit,
                          pg_runtime **rt) {
    char devices[300];
    snprintf(devices, sizeof devices, "sim:%s", topo);
    pg_options o;
    pg_options_init(&o);
    o.devices = devices;
    o.power_watts = "0:300,1:300,2:60,3:60";
    o.models = models;
    o.cache_dir = tmpdir;
    if (limit)
        pg_options_set(&o, "power_limit", limit);
    return pg_runtime_new(&o, rt);
}

static void performance_mixes(void) {
    char topo[300];
    snprintf(topo, sizeof topo, "%s/mixed.topo", tmpdir);
    FILE *f = fopen(topo, "w");
    REQUIRE_OK(f ? PG_OK : PG_ERROR_IO);
    fputs(TOPO, f);
    fclose(f);
    pg_runtime *rt;
    pg_power_choice c;
    /* nominal: 100 SMs / 300 W < 25 SMs / 60 W, so the small ones first */
    REQUIRE_OK(make_sim(topo, "on", "360", &rt));
    CHECK(!strcmp(chosen(rt, &c), "2,3") && !c.from_models);
    CHECK(c.performance[0] == 100 && c.performance[2] == 25 && c.used_watts == 120);
    CHECK_OK(pg_runtime_free(rt));
    REQUIRE_OK(make_sim(topo, "on", NULL, &rt));
    /* script the models: the big GPU 8x faster at one kernel and size (4 samples: the first
     * is warm-up) */
    for (int i = 0; i < 4; i++)
        for (int d = 0; d < 4; d++)
            CHECK_OK(pg_runtime_model_sample(rt, "k", d, 4096, d < 2 ? 1000 : 8000));
    CHECK_OK(pg_runtime_free(rt)); /* writes the models to the cache folder */
    REQUIRE_OK(make_sim(topo, "on", "360", &rt));
    CHECK(!strcmp(chosen(rt, &c), "0,2") && c.from_models); /* big (per W), then what fits */
    CHECK(c.performance[0] > 7.9 * c.performance[2] && c.performance[0] < 8.1 * c.performance[2]);
    CHECK_OK(pg_runtime_free(rt));
    /* models off: nominal again */
    REQUIRE_OK(make_sim(topo, "off", "360", &rt));
    CHECK(!strcmp(chosen(rt, &c), "2,3") && !c.from_models);
    CHECK_OK(pg_runtime_free(rt));
}

/* CPU-device energy: injected watts x busy time. */
static void energy(void) {
    pg_runtime *rt;
    REQUIRE_OK(make("host:2", "0:100,1:50", "120", &rt)); /* only device 1 (50 W) is chosen */
    pg_kernel *k = NULL;
    REQUIRE_OK(pg_kernel_new(rt, SPIN_SRC, "spin", NULL, NULL, &k));
    pg_array *a = test_array(rt, 16);
    pg_stats s0, s1, s2;
    CHECK_OK(pg_runtime_stats(rt, &s0));
    CHECK(s0.energy_joules[0] == 0 && s0.energy_joules[1] == 0);
    uint64_t t0 = now_ns();
    pg_arg args[2] = {pg_arg_array(a), pg_arg_int(30000000)}; /* 30 ms */
    CHECK_OK(pg_kernel_launch(k, dim1(1), dim1(1), 0, args, 2));
    CHECK_OK(pg_runtime_sync(rt));
    uint64_t t1 = now_ns();
    CHECK_OK(pg_runtime_stats(rt, &s1));
    double j = s1.energy_joules[1];
    CHECK(j >= 50 * 0.030 && j <= 50 * (double)(t1 - t0) / 1e9); /* at least 30 ms busy */
    CHECK(s1.energy_joules[0] == 0);
    CHECK_OK(pg_kernel_launch(k, dim1(1), dim1(1), 0, args, 2));
    CHECK_OK(pg_runtime_sync(rt));
    CHECK_OK(pg_runtime_stats(rt, &s2));
    CHECK(s2.energy_joules[1] >= j + 50 * 0.030); /* grows with the work */
    usleep(20000);
    pg_stats s3;
    CHECK_OK(pg_runtime_stats(rt, &s3));
    CHECK(s3.energy_joules[1] == s2.energy_joules[1]); /* idle: no energy counted */
    /* the trace has counters for the devices with a figure: device 1's energy as of now */
    char path[300], text[1 << 16];
    snprintf(path, sizeof path, "%s/trace.json", tmpdir);
    CHECK_OK(pg_trace_write(rt, path));
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f)
        fclose(f);
    text[n] = 0;
    char want[120];
    snprintf(want, sizeof want, "{\"ph\":\"C\",\"name\":\"energy\",\"pid\":2,");
    CHECK(strstr(text, want) != NULL);
    snprintf(want, sizeof want, "\"args\":{\"J\":%.6f}}", s3.energy_joules[1]);
    CHECK(strstr(text, want) != NULL);
    CHECK(strstr(text, "{\"ph\":\"C\",\"name\":\"power\",\"pid\":1,") != NULL); /* 0 W */
    float v = 0;
    CHECK_OK(pg_array_read(a, 0, 1, &v));
    CHECK(v == 2.0f);
    CHECK_OK(pg_runtime_free(rt));
}

int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "%s/pg-power-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    watts_injected();
    greedy();
    budget_places();
    budget_errors();
    performance_mixes();
    energy();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    CHECK_DONE();
}
