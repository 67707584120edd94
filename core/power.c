/* power.c: watts and joules per device (NVML through the backend on GPUs, injected figures on
 * the others) and the runtime's side of them: busy time, peaks, energy since start. */
#include "core/power.h"
#include "core/handle.h"
#include "core/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* NVML is read at most this often per device: a power query costs the driver a round trip,
 * and NVML itself averages power over about a second. */
#define SAMPLE_EVERY_NS 100000000ull

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

/* The runtime's clock (the trace's time base: virtual on simulated devices). */
static uint64_t clock_now(pg__runtime *rt) {
    return rt->ops->clock_ns ? rt->ops->clock_ns(rt->b) : pg__now_ns() - rt->epoch_ns;
}

/* A trace sample of dev: watts, or (w < 0) the average since its previous sample. */
static pg__dag_power make_sample(pg__runtime *rt, int dev, double w) {
    pg__power_dev *pd = &rt->power->dev[dev];
    pg__dag_power s = {clock_now(rt), dev, w, pg__power_energy(rt, dev)};
    if (w < 0)
        s.watts = s.t_ns > pd->last_t && s.joules >= pd->last_j
                      ? (s.joules - pd->last_j) / ((double)(s.t_ns - pd->last_t) / 1e9)
                      : 0;
    return s;
}

static void keep_sample(pg__runtime *rt, int dev, double w) {
    pg__power *p = rt->power;
    pg__dag_power s = make_sample(rt, dev, w);
    p->dev[dev].last_j = s.joules >= 0 ? s.joules : 0;
    p->dev[dev].last_t = s.t_ns;
    p->sample[(p->head + p->nsample) % PG__POWER_SAMPLES] = s;
    if (p->nsample < PG__POWER_SAMPLES)
        p->nsample++;
    else
        p->head = (p->head + 1) % PG__POWER_SAMPLES;
}

/* Called when work on dev finished or is running, at most every SAMPLE_EVERY_NS: a GPU's power
 * now, kept when it is the highest seen; a trace sample either way. */
static void sample(pg__runtime *rt, int dev, uint64_t now) {
    pg__power_dev *pd = &rt->power->dev[dev];
    if (now - pd->sampled_ns < SAMPLE_EVERY_NS || (!pd->nvml && !pd->injected_w))
        return;
    pd->sampled_ns = now;
    unsigned mw = 0;
    if (!pd->nvml) {
        keep_sample(rt, dev, -1); /* the average over the busy time since the last */
    } else if (rt->ops->power_mw && rt->ops->power_mw(rt->b, dev, &mw)) {
        if (mw / 1000.0 > pd->peak_w)
            pd->peak_w = mw / 1000.0;
        keep_sample(rt, dev, mw / 1000.0);
    }
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
    p->allowed = rt->ndev >= 32 ? UINT32_MAX : (1u << rt->ndev) - 1;
    for (int d = 0; d < rt->ndev; d++) {
        pg__power_dev *pd = &p->dev[d];
        pd->injected_w = watts[d] > 0 ? watts[d] : all;
        unsigned mw = 0;
        if (rt->ops->power_default_mw && rt->ops->power_default_mw(rt->b, d, &mw) && mw) {
            pd->default_w = mw / 1000.0;
            pd->nvml = 1;
        }
        if (rt->ops->power_mw && rt->ops->power_mw(rt->b, d, &mw))
            pd->nvml = 1; /* the load is seen as work runs; the default limit is not needed */
        uint64_t mj = 0;
        if (rt->ops->energy_mj && rt->ops->energy_mj(rt->b, d, &mj)) {
            pd->energy_known = 1;
            pd->energy_start_mj = mj;
        }
        if (pd->nvml && pd->injected_w > 0)
            pg__log(rt, 1, "device %d: NVML gives its power; power_watts' %g W is not used", d,
                    pd->injected_w);
        else if (rt->dev[d].info.device_class == PG_CLASS_GPU && !pd->nvml && !pd->injected_w)
            pg__log(rt, 1,
                    "device %d: no power figure (NVML absent or not serving it): energy unknown; "
                    "power_watts can give one",
                    d);
    }
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
    if (pd->nvml)
        return pd->peak_w > 0 ? pd->peak_w : pd->default_w;
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
    if (!pd->nvml && !pd->injected_w)
        return; /* no figure: nothing to count (and no clock read per computation) */
    if (!pd->nvml && c->timed && c->timing.end_ns > c->timing.start_ns)
        pd->busy_ns += c->timing.end_ns - c->timing.start_ns;
    sample(rt, c->device, pg__now_ns());
}

pg_status pg__power_samples(pg__runtime *rt, pg__dag_power **out, size_t *n) {
    *out = NULL;
    *n = 0;
    pg__power *p = rt->power;
    if (!p)
        return PG_OK;
    pg__dag_power *s = pg__malloc((p->nsample + (size_t)rt->ndev) * sizeof *s);
    if (!s)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory for the power samples");
    size_t k = 0;
    for (size_t i = 0; i < p->nsample; i++)
        s[k++] = p->sample[(p->head + i) % PG__POWER_SAMPLES];
    for (int d = 0; d < rt->ndev; d++) { /* and as of now */
        const pg__power_dev *pd = &p->dev[d];
        unsigned mw = 0;
        if (pd->nvml && rt->ops->power_mw && rt->ops->power_mw(rt->b, d, &mw))
            s[k++] = make_sample(rt, d, mw / 1000.0);
        else if (!pd->nvml && pd->injected_w)
            s[k++] = make_sample(rt, d, -1);
    }
    *out = s;
    *n = k;
    return PG_OK;
}

double pg__power_energy(pg__runtime *rt, int dev) {
    if (!rt->power || dev < 0 || dev >= rt->ndev)
        return -1;
    const pg__power_dev *pd = &rt->power->dev[dev];
    uint64_t mj = 0;
    if (pd->energy_known && rt->ops->energy_mj(rt->b, dev, &mj))
        return mj >= pd->energy_start_mj ? (double)(mj - pd->energy_start_mj) / 1000.0 : 0;
    if (!pd->nvml && pd->injected_w > 0 && rt->timing_all)
        return pd->injected_w * (double)pd->busy_ns / 1e9;
    return -1;
}

void pg__power_stats(pg__runtime *rt, pg_stats *out) {
    uint64_t now = pg__now_ns();
    for (int d = 0; d < PG_MAX_DEVICES; d++) {
        out->energy_joules[d] = -1;
        out->power_watts[d] = 0;
    }
    for (int d = 0; d < rt->ndev; d++) {
        if (rt->dev[d].inflight)
            sample(rt, d, now); /* running now: its load */
        out->energy_joules[d] = pg__power_energy(rt, d);
        out->power_watts[d] = pg__power_watts(rt, d);
    }
}
