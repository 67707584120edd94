/* power.c: watts and joules per device (NVML through the backend on GPUs, injected figures on
 * the others) and the runtime's side of them: busy time, peaks, energy since start. */
#include "core/power.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* NVML is read at most this often per device: a power query costs the driver a round trip,
 * and NVML itself averages power over about a second. */
#define SAMPLE_EVERY_NS 100000000ull

typedef struct pg__power_dev {
    double injected_w; /* option power_watts; 0: none */
    double default_w;  /* NVML's default power limit; 0: unknown */
    double peak_w;     /* highest NVML power seen while work ran here; 0: none yet */
    int energy_known;  /* NVML gives this GPU's energy counter */
    uint64_t energy_start_mj;
    uint64_t busy_ns;    /* devices with an injected figure: time their operations ran */
    uint64_t sampled_ns; /* pg__now_ns() of the last NVML power read */
} pg__power_dev;

struct pg__power {
    pg__power_dev dev[PG_MAX_DEVICES];
};

static int parse_watt(const char *s, const char *end, double *out) {
    char buf[64];
    size_t n = (size_t)(end - s);
    if (n == 0 || n >= sizeof buf)
        return 0;
    memcpy(buf, s, n);
    buf[n] = 0;
    char *e;
    errno = 0;
    double w = strtod(buf, &e);
    if (errno || *e || !(w > 0) || isinf(w))
        return 0;
    *out = w;
    return 1;
}

pg_status pg__power_parse_watts(const char *spec, double watts[PG_MAX_DEVICES], double *all) {
    for (int d = 0; d < PG_MAX_DEVICES; d++)
        watts[d] = 0;
    *all = 0;
    if (!spec || !*spec)
        return PG_OK;
    if (!strchr(spec, ':')) {
        if (parse_watt(spec, spec + strlen(spec), all))
            return PG_OK;
    } else {
        const char *p = spec;
        for (;;) {
            char *colon;
            errno = 0;
            long d = strtol(p, &colon, 10);
            if (colon == p || *colon != ':' || errno || d < 0 || d >= PG_MAX_DEVICES)
                break;
            const char *v = colon + 1, *end = strchr(v, ',');
            if (!end)
                end = v + strlen(v);
            if (!parse_watt(v, end, &watts[d]))
                break;
            if (!*end)
                return PG_OK;
            p = end + 1;
        }
    }
    return pg__error(PG_ERROR_ARGUMENT,
                     "option power_watts: '%s' is not a power figure: expected watts for every "
                     "device (\"120\") or per device (\"0:120,1:80\", devices 0..%d), each a "
                     "positive number",
                     spec, PG_MAX_DEVICES - 1);
}

pg_status pg__power_init(pg__runtime *rt) {
    pg__power *p = pg__calloc(1, sizeof *p);
    if (!p)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    double watts[PG_MAX_DEVICES], all;
    pg_status st = pg__power_parse_watts(rt->opt.power_watts, watts, &all);
    for (int d = rt->ndev; !st && d < PG_MAX_DEVICES; d++)
        if (watts[d] > 0)
            st =
                pg__error(PG_ERROR_ARGUMENT,
                          "option power_watts: '%s' names device %d, but there are %d device%s "
                          "(0..%d)",
                          rt->opt.power_watts, d, rt->ndev, rt->ndev == 1 ? "" : "s", rt->ndev - 1);
    if (st) {
        pg__free(p);
        return st;
    }
    for (int d = 0; d < rt->ndev; d++)
        p->dev[d].injected_w = watts[d] > 0 ? watts[d] : all;
    rt->power = p;
    return PG_OK;
}

void pg__power_free(pg__runtime *rt) {
    pg__free(rt->power);
    rt->power = NULL;
}

double pg__power_watts(pg__runtime *rt, int dev) {
    if (!rt->power || dev < 0 || dev >= rt->ndev)
        return 0;
    const pg__power_dev *pd = &rt->power->dev[dev];
    if (pd->peak_w > 0)
        return pd->peak_w;
    if (pd->default_w > 0)
        return pd->default_w;
    return pd->injected_w;
}

double(pg__power_device_watts)(pg_runtime *h, int dev) {
    pg__runtime *rt = pg__enter_runtime(h, "pg__power_device_watts");
    if (!rt)
        return 0;
    double w = pg__power_watts(rt, dev);
    pg__leave(rt);
    return w;
}

void pg__power_note(pg__runtime *rt, const pg__comp *c) {
    if (!rt->power || c->device < 0 || c->device >= rt->ndev)
        return;
    pg__power_dev *pd = &rt->power->dev[c->device];
    if (c->timed && pd->default_w <= 0 && c->timing.end_ns > c->timing.start_ns)
        pd->busy_ns += c->timing.end_ns - c->timing.start_ns;
}
