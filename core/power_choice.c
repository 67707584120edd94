/* power_choice.c: the devices a power budget allows (option power_limit), chosen once at
 * creation by Czarnul's greedy rule (CCPE 2023): again and again the device with the best
 * performance per watt whose power still fits in what is left of the budget. Performance comes
 * from the performance models when they can compare every device, else from each device's
 * nominal throughput; power from pg__power_watts. Placement keeps to the chosen set
 * (pg__power_fit, called by the launch). */
#include "core/power.h"
#include "core/handle.h"
#include "core/models.h"
#include "core/util.h"

#include <stdio.h>
#include <string.h>

/* The rule itself, over plain figures (exported for the tests): chosen[] gets the devices in
 * the order taken, *nchosen how many, *used their watts together. limit <= 0: every device, in
 * index order. Ties in performance per watt go to the faster device, then the lower index. */
void pg__power_greedy(int n, const double *perf, const double *watts, double limit, int *chosen,
                      int *nchosen, double *used) {
    int taken[PG_MAX_DEVICES] = {0};
    *nchosen = 0;
    *used = 0;
    for (;;) {
        int best = -1;
        for (int d = 0; d < n; d++) {
            if (taken[d] || (limit > 0 && watts[d] > limit - *used + 1e-9 * limit))
                continue;
            if (best < 0) {
                best = d;
                continue;
            }
            /* perf/watts compared without dividing: a device of 0 W (no budget) is no NaN */
            double l = perf[d] * watts[best], r = perf[best] * watts[d];
            if (l > r || (l == r && perf[d] > perf[best]))
                best = d;
        }
        if (best < 0)
            return;
        if (limit <= 0) /* no budget: index order, the order the devices are listed */
            for (best = 0; taken[best]; best++)
                ;
        taken[best] = 1;
        chosen[(*nchosen)++] = best;
        *used += watts[best];
    }
}

/* GPUs: SMs x clock (kHz; the SM count alone where the driver gives no clock); CPU devices:
 * their worker threads. Comparable between devices of one backend, which is all a runtime has. */
static double nominal(const pg_device_info *i) {
    double sms = i->multiprocessors > 0 ? i->multiprocessors : 1;
    return i->device_class == PG_CLASS_GPU && i->clock_khz ? sms * i->clock_khz : sms;
}

static void list_devices(char *out, size_t cap, const int *devs, int n) {
    size_t len = 0;
    out[0] = 0;
    for (int i = 0; i < n && len < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%d", i ? ", " : "", devs[i]);
}

pg_status pg__power_choose(pg__runtime *rt) {
    pg__power *p = rt->power;
    pg_power_choice *c = &p->choice;
    memset(c, 0, sizeof *c);
    c->limit_watts = rt->opt.power_limit;
    c->ndevices = rt->ndev;
    for (int d = 0; d < rt->ndev; d++)
        c->watts[d] = pg__power_watts(rt, d);
    c->from_models = pg__models_speed(rt, c->performance) > 0;
    for (int d = 0; !c->from_models && d < rt->ndev; d++)
        c->performance[d] = nominal(&rt->dev[d].info);
    if (c->limit_watts > 0) {
        int unknown[PG_MAX_DEVICES], nu = 0, smallest = -1;
        for (int d = 0; d < rt->ndev; d++) {
            if (!(c->watts[d] > 0))
                unknown[nu++] = d;
            else if (smallest < 0 || c->watts[d] < c->watts[smallest])
                smallest = d;
        }
        char list[256];
        if (nu) {
            list_devices(list, sizeof list, unknown, nu);
            return pg__error(PG_ERROR_ARGUMENT,
                             "power_limit %g W: the power of device%s %s is unknown (NVML gives "
                             "none): give it with the option power_watts (e.g. \"%d:250\")",
                             c->limit_watts, nu == 1 ? "" : "s", list, unknown[0]);
        }
        if (c->watts[smallest] > c->limit_watts * (1 + 1e-9))
            return pg__error(PG_ERROR_ARGUMENT,
                             "power_limit %g W fits no device: the smallest draws %g W (device "
                             "%d, %s); raise the budget to at least that, or set none (0)",
                             c->limit_watts, c->watts[smallest], smallest,
                             rt->dev[smallest].info.name);
    }
    pg__power_greedy(rt->ndev, c->performance, c->watts, c->limit_watts, c->chosen, &c->nchosen,
                     &c->used_watts);
    p->allowed = 0;
    for (int i = 0; i < c->nchosen; i++)
        p->allowed |= 1u << c->chosen[i];
    if (c->limit_watts > 0) {
        char list[256];
        list_devices(list, sizeof list, c->chosen, c->nchosen);
        pg__log(rt, 1, "power_limit %g W: devices %s (%g W), performance per watt from %s",
                c->limit_watts, list, c->used_watts,
                c->from_models ? "the performance models" : "nominal throughput");
    }
    return PG_OK;
}

pg_status pg__power_fit(const pg__runtime *rt, const char *kernel, uint32_t *fits) {
    uint32_t allowed = rt->power ? rt->power->allowed : *fits;
    if (*fits & allowed) {
        *fits &= allowed;
        return PG_OK;
    }
    int in[PG_MAX_DEVICES] = {0}, nin = 0, ok[PG_MAX_DEVICES] = {0}, nok = 0;
    for (int d = 0; d < rt->ndev; d++) {
        if (allowed >> d & 1)
            in[nin++] = d;
        if (*fits >> d & 1)
            ok[nok++] = d;
    }
    char a[256], b[256];
    list_devices(a, sizeof a, in, nin);
    list_devices(b, sizeof b, ok, nok);
    return pg__error(PG_ERROR_ARGUMENT,
                     "kernel '%s' can run only on device%s %s, and the power budget (power_limit "
                     "%g W) allows only device%s %s",
                     kernel ? kernel : "?", nok == 1 ? "" : "s", b, rt->opt.power_limit,
                     nin == 1 ? "" : "s", a);
}

pg_status pg_runtime_power_choice(pg_runtime *h, pg_power_choice *out) {
    pg__error_clear();
    if (!out)
        return pg__error(PG_ERROR_ARGUMENT, "pg_runtime_power_choice: out must not be NULL");
    pg__runtime *rt = pg__enter_runtime(h, "pg_runtime_power_choice");
    if (!rt)
        return PG_ERROR_STATE;
    *out = rt->power->choice;
    pg__leave(rt);
    return PG_OK;
}
