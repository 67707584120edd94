/* sim_spec.c: parsing "sim:PRESET[,key=value...]" (sim_spec.h). */
#include "devices/sim/sim_spec.h"
#include "base/error.h"
#include "devices/sim/sim_text.h"
#include "devices/sim/sim_topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPTIONS                                                                                    \
    "compute=none|cpu, profile=PATH, host_time=SCALE (0 freezes host time), host_clock=wall|cpu, " \
    "reads=checked|any"

static pg_status set_compute(pg__sim_spec *s, const char *v, const char *from) {
    if (!strcmp(v, "none") || !strcmp(v, "cpu")) {
        s->compute = v[0] == 'c';
        return PG_OK;
    }
    return pg__error(PG_ERROR_ARGUMENT,
                     "%s: compute '%s' is not none (timing only) or cpu (kernels also run on the "
                     "CPU)",
                     from, v);
}

static pg_status set_host_time(pg__sim_spec *s, const char *v, const char *from) {
    double x;
    /* At most 1000: a larger scale makes seconds of the host's time centuries of virtual time,
     * past what the clock (double nanoseconds) still advances by a nanosecond. */
    if (pg__sim_number(v, &x) || x < 0 || x > 1000)
        return pg__error(PG_ERROR_ARGUMENT,
                         "%s: host_time '%s' is not a number from 0 to 1000 (1: the host's real "
                         "time counts; 0: frozen, for deterministic runs)",
                         from, v);
    s->host_time = x;
    return PG_OK;
}

static pg_status set_host_clock(pg__sim_spec *s, const char *v, const char *from) {
    if (!strcmp(v, "wall") || !strcmp(v, "cpu")) {
        s->host_cpu = v[0] == 'c';
        return PG_OK;
    }
    return pg__error(PG_ERROR_ARGUMENT,
                     "%s: host_clock '%s' is not wall (the host's real time) or cpu (the calling "
                     "thread's CPU time)",
                     from, v);
}

static pg_status set_reads(pg__sim_spec *s, const char *v, const char *from) {
    if (!strcmp(v, "checked") || !strcmp(v, "any")) {
        s->reads_any = v[0] == 'a';
        return PG_OK;
    }
    return pg__error(PG_ERROR_ARGUMENT,
                     "%s: reads '%s' is not checked (compute=none refuses reading what devices "
                     "made) or any (it returns whatever the host copy holds)",
                     from, v);
}

static pg_status set_profile(pg__sim_spec *s, const char *v, const char *from) {
    if (strlen(v) >= sizeof s->profile)
        return pg__error(PG_ERROR_ARGUMENT, "%s: the profile path is too long", from);
    snprintf(s->profile, sizeof s->profile, "%s", v);
    return PG_OK;
}

static pg_status defaults(pg__sim_spec *s) {
    memset(s, 0, sizeof *s);
    s->host_time = 1.0;
    /* Values are computed unless a run asks for timing alone: a read never returns a value
     * nobody computed (compute=none refuses reads of what devices made). */
    s->compute = 1;
    const char *e;
    pg_status st = PG_OK;
    if ((e = getenv("PG_SIM_COMPUTE")) && e[0])
        st = set_compute(s, e, "PG_SIM_COMPUTE");
    if (!st && (e = getenv("PG_SIM_HOST_TIME")) && e[0])
        st = set_host_time(s, e, "PG_SIM_HOST_TIME");
    if (!st && (e = getenv("PG_SIM_PROFILE")) && e[0])
        st = set_profile(s, e, "PG_SIM_PROFILE");
    if (!st && (e = getenv("PG_SIM_HOST_CLOCK")) && e[0])
        st = set_host_clock(s, e, "PG_SIM_HOST_CLOCK");
    if (!st && (e = getenv("PG_SIM_READS")) && e[0])
        st = set_reads(s, e, "PG_SIM_READS");
    return st;
}

pg_status pg__sim_spec_parse(const char *spec, pg__sim_spec *out) {
    pg_status st = defaults(out);
    if (st)
        return st;
    char buf[1200];
    if (!spec || !spec[0])
        return pg__error(PG_ERROR_ARGUMENT,
                         "sim devices need a machine: sim:PRESET (e.g. sim:dgx1-v100, "
                         "sim:hgx-h200x8) or sim:/path/to/file.topo");
    if (strlen(spec) >= sizeof buf)
        return pg__error(PG_ERROR_ARGUMENT, "sim device spec is too long");
    snprintf(buf, sizeof buf, "%s", spec);
    char *opts = strchr(buf, ',');
    if (opts)
        *opts++ = '\0';
    while (!st && opts) {
        char *next = strchr(opts, ',');
        if (next)
            *next++ = '\0';
        char *eq = strchr(opts, '=');
        if (!eq)
            return pg__error(PG_ERROR_ARGUMENT, "sim:%s: option '%s' is not key=value (%s)", spec,
                             opts, OPTIONS);
        *eq = '\0';
        const char *k = opts, *v = eq + 1;
        char from[64];
        snprintf(from, sizeof from, "sim option %s", k);
        if (!strcmp(k, "compute"))
            st = set_compute(out, v, from);
        else if (!strcmp(k, "host_time"))
            st = set_host_time(out, v, from);
        else if (!strcmp(k, "profile"))
            st = set_profile(out, v, from);
        else if (!strcmp(k, "host_clock"))
            st = set_host_clock(out, v, from);
        else if (!strcmp(k, "reads"))
            st = set_reads(out, v, from);
        else
            return pg__error(PG_ERROR_ARGUMENT, "sim:%s: unknown option '%s' (%s)", spec, k,
                             OPTIONS);
        opts = next;
    }
    if (st)
        return st;
    size_t n = strlen(buf);
    if (strchr(buf, '/') || (n > 5 && !strcmp(buf + n - 5, ".topo"))) {
        snprintf(out->topo, sizeof out->topo, "%s", buf);
        return PG_OK;
    }
    return pg__sim_topo_find(buf, out->topo, sizeof out->topo);
}
