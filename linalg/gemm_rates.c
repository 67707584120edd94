/* gemm_rates.c: each device class's GEMM rate per dtype, for the tiled GEMM's model when the
 * performance models do not know its tile task yet: measured once (two square GEMMs on one
 * device of the class, through the runtime like any task, fitted as a per-call overhead plus
 * flops at a rate), kept for the process, and cached under <cache_dir>/models/gemm-rates.csv
 * (one line per class and dtype, written atomically) so later processes skip the measurement.
 * Public calls only (arrays, launches on a device, a sync, the device queries). */
#include "linalg/linalg.h"

#include "base/error.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { MAX_RATES = 64, REPS = 3 };

typedef struct rate {
    char cls[128];
    pg_dtype dt;
    double gflops, overhead_s;
    int local; /* measured under a memory limit: this process's alone, never written */
} rate;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static rate rates[MAX_RATES];
static int nrates;

static const rate *find(const char *cls, pg_dtype dt) {
    for (int i = 0; i < nrates; i++)
        if (rates[i].dt == dt && !strcmp(rates[i].cls, cls))
            return &rates[i];
    return NULL;
}

static void put(const char *cls, pg_dtype dt, double gflops, double overhead_s, int local) {
    rate *r = (rate *)find(cls, dt);
    if (!r && nrates < MAX_RATES)
        r = &rates[nrates++];
    if (!r)
        return;
    snprintf(r->cls, sizeof r->cls, "%s", cls);
    r->dt = dt;
    r->gflops = gflops;
    r->overhead_s = overhead_s;
    r->local = local;
}

/* The class a device's rate is kept under: the models' (pg_runtime_model_class: a GPU's
 * name; CPU devices by their thread count, as identical devices share one). Commas would break
 * the file: replaced. */
static void class_of(const char *model_class, char *out, size_t cap) {
    snprintf(out, cap, "%s", model_class);
    for (char *p = out; *p; p++)
        if (*p == ',' || *p == '\n')
            *p = ' ';
}

/* mkdir -p dir (0700); 0 when it is a folder of this user's that nobody else may write (the
 * rates steer where work goes: another user's file is not taken), else -1. */
static int own_dir(const char *dir) {
    char p[1100];
    size_t n = (size_t)snprintf(p, sizeof p, "%s", dir);
    if (n == 0 || n >= sizeof p)
        return -1;
    for (size_t i = 1; i <= n; i++) {
        if (p[i] != '/' && p[i] != '\0')
            continue;
        char c = p[i];
        p[i] = '\0';
        if (mkdir(p, 0700) != 0 && errno != EEXIST)
            return -1;
        p[i] = c;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || st.st_mode & 022)
        return -1;
    return 0;
}

static void file_path(const char *cache_dir, char *out, size_t cap) {
    snprintf(out, cap, "%s/models/gemm-rates.csv", cache_dir);
}

/* Lines "class,dtype,gflops,overhead_us"; a line that does not parse is skipped. Lock held. */
static void load_file(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char *c1 = strchr(line, ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
        if (!c2 || line[0] == '#')
            continue;
        *c1 = *c2 = '\0';
        pg_dtype dt;
        double g, us;
        if (pg_dtype_parse(c1 + 1, &dt) || sscanf(c2 + 1, "%lf,%lf", &g, &us) != 2 || g <= 0 ||
            us < 0)
            continue;
        if (!find(line, dt))
            put(line, dt, g, us * 1e-6, 0);
    }
    fclose(f);
}

/* Every rate known, written to a temporary name and renamed over the file. Lock held. */
static void save_file(const char *cache_dir, const char *path) {
    char dir[1100], tmp[1300];
    snprintf(dir, sizeof dir, "%s/models", cache_dir);
    if (own_dir(dir) != 0)
        return;      /* no cache: the rates stand for this process */
    load_file(path); /* keep what another process added meanwhile */
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return;
    fprintf(f, "# device class,dtype,GEMM GFLOP/s,overhead per call (us): polygpu's tiled gemm\n");
    for (int i = 0; i < nrates; i++)
        if (!rates[i].local)
            fprintf(f, "%s,%s,%.6g,%.6g\n", rates[i].cls, pg_dtype_name(rates[i].dt),
                    rates[i].gflops, rates[i].overhead_s * 1e6);
    if (fclose(f) != 0 || rename(tmp, path) != 0)
        remove(tmp);
}

static pg_status new2d(pg_runtime *rt, pg_dtype dt, int64_t n, pg_array **out) {
    int64_t shape[2] = {n, n};
    return pg_array_new(rt, dt, 2, shape, out);
}

/* The best of REPS timed runs of an n x n x n GEMM on dev (after one untimed: copies in,
 * library handles). */
static pg_status time_gemm(pg_runtime *rt, pg_kernel *k, int dev, pg_dtype dt, int64_t n,
                           double *secs) {
    pg_array *a = NULL, *b = NULL, *c = NULL;
    pg_status st = new2d(rt, dt, n, &a);
    if (!st)
        st = new2d(rt, dt, n, &b);
    if (!st)
        st = new2d(rt, dt, n, &c);
    pg_arg args[12] = {pg_arg_array(a),  pg_arg_array(b),  pg_arg_array(c), pg_arg_int(n),
                       pg_arg_int(n),    pg_arg_int(n),    pg_arg_int(0),   pg_arg_int(0),
                       pg_arg_double(1), pg_arg_double(0), pg_arg_int(0),   pg_arg_int(n)};
    pg_dim3 one = {1, 1, 1}; /* a task: grid and block are ignored */
    *secs = 0;
    for (int r = 0; !st && r <= REPS; r++) {
        uint64_t t0 = 0, t1 = 0;
        st = pg_runtime_sync(rt);
        if (!st)
            st = pg_runtime_clock(rt, &t0);
        if (!st)
            st = pg_kernel_launch_on(k, dev, one, one, 0, args, 12, 0);
        if (!st)
            st = pg_runtime_sync(rt);
        if (!st)
            st = pg_runtime_clock(rt, &t1);
        double s = (double)(t1 - t0) * 1e-9;
        if (!st && r > 0 && (*secs == 0 || s < *secs))
            *secs = s;
    }
    /* pg_array_free clears the thread's message on entry: a failure's cause is kept. */
    char why[2048];
    if (st)
        snprintf(why, sizeof why, "%s", pg_last_error());
    if (a)
        pg_array_free(a);
    if (b)
        pg_array_free(b);
    if (c)
        pg_array_free(c);
    return st ? pg__error(st, "%s", why) : PG_OK;
}

/* mem: what one launch's arguments may take on the device (0: no limit). *reduced: the
 * matrices were made smaller to fit it, so the rate is not the class's to keep. */
static pg_status measure(pg_runtime *rt, int dev, const pg_device_info *info, pg_dtype dt,
                         int64_t big, uint64_t mem, double *gflops, double *overhead_s,
                         int *reduced) {
    uint64_t e = pg_dtype_size(dt);
    *reduced = 0;
    while (mem && big > 8 && 3 * (uint64_t)big * (uint64_t)big * e > mem) {
        big /= 2;
        *reduced = 1;
    }
    int64_t small = big / 8;
    pg_kernel *k = NULL;
    pg_status st =
        pg_task_builtin(rt, dt == PG_FLOAT64 ? "gemm_tile_out_f64" : "gemm_tile_out_f32", &k);
    double tb = 0, ts = 0;
    if (!st)
        st = time_gemm(rt, k, dev, dt, big, &tb);
    if (!st)
        st = time_gemm(rt, k, dev, dt, small, &ts);
    char why[2048];
    if (st)
        snprintf(why, sizeof why, "%s", pg_last_error());
    if (k)
        pg_kernel_free(k); /* a public call: clears the message, restored below */
    if (st)
        return pg__error_wrap(pg__error(st, "%s", why), "measuring the GEMM rate of device %d (%s)",
                              dev, info->name);
    double fb = 2.0 * (double)big * (double)big * (double)big,
           fs = 2.0 * (double)small * (double)small * (double)small;
    if (tb > ts) {
        *gflops = (fb - fs) / (tb - ts) * 1e-9;
        *overhead_s = ts - fs / (*gflops * 1e9);
        if (*overhead_s < 0)
            *overhead_s = 0;
    } else { /* noise beat the difference: all rate, no overhead */
        *gflops = fb / (tb > 0 ? tb : 1e-9) * 1e-9;
        *overhead_s = 0;
    }
    return PG_OK;
}

/* The side of the square GEMM that reaches device dev's rate, large enough for its rate (an
 * H100: ~2-20 ms) and small enough for a first call; the small one (an eighth) mostly measures
 * the per-call cost. From the device's nominal throughput: one that retires 1e11 simple threads
 * a second or more (a GPU: an H100 ~2.6e11, SMs x clock) reaches its GEMM rate only on large
 * matrices; slower ones (CPU devices: 2.5e8 per worker thread) on small ones. */
static int64_t big_side(double threads_per_s) {
    return threads_per_s >= 1e11 ? 8192 : 256;
}

pg_status pg__gemm_rate(pg_runtime *rt, int dev, pg_dtype dt, double *gflops, double *overhead_s) {
    const pg__linalg_facts *f = NULL;
    pg_status st = pg__linalg_facts_get(rt, &f);
    if (st)
        return st;
    if (dev < 0 || dev >= f->ndev)
        return pg__error(PG_ERROR_INTERNAL, "gemm rate: device %d of %d", dev, f->ndev);
    char cls[128], path[1200];
    class_of(f->model_class[dev], cls, sizeof cls);
    int64_t big = big_side(f->threads_per_s[dev]);
    uint64_t mem = f->memory[dev];
    const char *cache_dir = f->cache_dir;
    file_path(cache_dir, path, sizeof path);
    /* Under a memory limit too small for the usual matrices, the rate measured on smaller ones
     * is kept for the process under a class of its own (later GEMMs do not measure again), and
     * never written to the file (it is not the class's rate). */
    int limited = mem && 3 * (uint64_t)big * (uint64_t)big * pg_dtype_size(dt) > mem;
    if (limited) {
        size_t len = strlen(cls);
        snprintf(cls + len, sizeof cls - len, " under a %llu-byte limit", (unsigned long long)mem);
    }
    pthread_mutex_lock(&mu);
    const rate *known = find(cls, dt);
    if (!known && !limited) {
        load_file(path);
        known = find(cls, dt);
    }
    if (known) {
        *gflops = known->gflops;
        *overhead_s = known->overhead_s;
    }
    pthread_mutex_unlock(&mu);
    if (known)
        return PG_OK;
    /* Two threads may both measure a class the first time: harmless, the last one stays. */
    int reduced = 0;
    pg_device_info info[PG_MAX_DEVICES];
    int n = 0;
    if ((st = pg_runtime_devices(rt, info, PG_MAX_DEVICES, &n)) ||
        (st = measure(rt, dev, &info[dev], dt, big, mem, gflops, overhead_s, &reduced)))
        return st;
    pthread_mutex_lock(&mu);
    put(cls, dt, *gflops, *overhead_s, reduced);
    if (!reduced)
        save_file(cache_dir, path);
    pthread_mutex_unlock(&mu);
    return PG_OK;
}
