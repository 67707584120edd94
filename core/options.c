/* options.c: runtime options — defaults, PG_* environment variables, validation. */
#include "core/options.h"
#include "core/power.h"
#include "devices/registry.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

void pg_options_init(pg_options *o) {
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->prefetch = -1;
    o->elide_copies = -1;
    o->exploration_threshold = -1.0;
    o->device_memory_limit = PG_DEVICE_MEMORY_UNSET;
    o->power_limit = -1.0;
}

static pg_status parse_number(const char *name, const char *v, double *out) {
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (errno || end == v || *end)
        return pg__error(PG_ERROR_ARGUMENT, "option %s: '%s' is not a number", name, v);
    *out = d;
    return PG_OK;
}

static pg_status parse_bool(const char *name, const char *v, int *out) {
    if (!strcasecmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "on") ||
        !strcasecmp(v, "yes")) {
        *out = 1;
        return PG_OK;
    }
    if (!strcasecmp(v, "0") || !strcasecmp(v, "false") || !strcasecmp(v, "off") ||
        !strcasecmp(v, "no")) {
        *out = 0;
        return PG_OK;
    }
    return pg__error(PG_ERROR_ARGUMENT, "option %s: '%s' is not a boolean (use 1/0, true/false)",
                     name, v);
}

/* A byte count: a number with an optional binary suffix (K, M, G, T, optionally followed by
 * "B" or "iB", any case), as memory options of JVMs and container runtimes are written. The
 * result must be a whole number of bytes below 2^64. */
static pg_status parse_bytes(const char *name, const char *v, uint64_t *out) {
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    int bad = errno || end == v || !(d >= 0) || isinf(d);
    double unit = 1;
    if (!bad && *end) {
        const char *units = "KMGT";
        const char *u = strchr(units, toupper((unsigned char)*end));
        if (!u)
            bad = 1;
        else {
            for (const char *p = units; p <= u; p++)
                unit *= 1024;
            end++;
            if (*end == 'i' || *end == 'I')
                end++;
            if (*end == 'b' || *end == 'B')
                end++;
            bad = *end != 0;
        }
    }
    double bytes = d * unit;
    if (!bad && (bytes >= 18446744073709551616.0 || bytes != floor(bytes)))
        bad = 1;
    if (bad)
        return pg__error(PG_ERROR_ARGUMENT,
                         "option %s: '%s' is not a byte count (use bytes, or a size such as 64M or "
                         "1.5G; 0 for no limit)",
                         name, v);
    *out = (uint64_t)bytes;
    return PG_OK;
}

pg_status pg_options_set(pg_options *o, const char *name, const char *value) {
    pg__error_clear();
    if (!o || !name || !value)
        return pg__error(PG_ERROR_ARGUMENT, "pg_options_set: options, name and value are needed");
    const char **str = NULL;
    if (!strcmp(name, "devices"))
        str = &o->devices;
    else if (!strcmp(name, "policy"))
        str = &o->policy;
    else if (!strcmp(name, "stream_policy"))
        str = &o->stream_policy;
    else if (!strcmp(name, "parent_stream_policy"))
        str = &o->parent_stream_policy;
    else if (!strcmp(name, "execution"))
        str = &o->execution;
    else if (!strcmp(name, "interconnect"))
        str = &o->interconnect;
    else if (!strcmp(name, "log"))
        str = &o->log;
    else if (!strcmp(name, "trace"))
        str = &o->trace;
    else if (!strcmp(name, "cache_dir"))
        str = &o->cache_dir;
    else if (!strcmp(name, "check"))
        str = &o->check;
    else if (!strcmp(name, "profile"))
        str = &o->profile;
    else if (!strcmp(name, "models"))
        str = &o->models;
    else if (!strcmp(name, "power_watts"))
        str = &o->power_watts;
    else if (!strcmp(name, "ranks"))
        str = &o->ranks;
    else if (!strcmp(name, "split"))
        str = &o->split;
    else if (!strcmp(name, "share"))
        str = &o->share;
    if (str) {
        const char *copy = pg__intern(value);
        if (!copy)
            return pg__error(PG_ERROR_OUT_OF_MEMORY, "pg_options_set: out of host memory for %s",
                             name);
        *str = copy;
        return PG_OK;
    }
    if (!strcmp(name, "prefetch") || !strcmp(name, "elide_copies")) {
        int b = 0;
        pg_status st = parse_bool(name, value, &b);
        if (st == PG_OK)
            *(name[0] == 'p' ? &o->prefetch : &o->elide_copies) = b;
        return st;
    }
    if (!strcmp(name, "exploration_threshold")) {
        /* A value given by name is always explicit: NaN or a negative number would otherwise
         * read as "unset" and silently become the default. */
        double d = 0;
        if (parse_number(name, value, &d) != PG_OK || !(d >= 0.0 && d <= 1.0))
            return pg__error(PG_ERROR_ARGUMENT,
                             "option exploration_threshold: '%s' is not a number in [0, 1] (the "
                             "share of the needed bytes a device must hold to count, e.g. 0.1)",
                             value);
        o->exploration_threshold = d;
        return PG_OK;
    }
    if (!strcmp(name, "power_limit")) {
        double d = 0;
        if (parse_number(name, value, &d) != PG_OK || !(d >= 0) || isinf(d))
            return pg__error(PG_ERROR_ARGUMENT,
                             "option power_limit: '%s' is not a power budget (watts per node, a "
                             "number >= 0; 0 for none)",
                             value);
        o->power_limit = d;
        return PG_OK;
    }
    if (!strcmp(name, "chunk_bytes")) {
        uint64_t b = 0;
        pg_status st = parse_bytes(name, value, &b);
        if (st == PG_OK && b == 0)
            st = pg__error(PG_ERROR_ARGUMENT,
                           "option chunk_bytes: 0 is not a chunk size (leave the option unset "
                           "for sizes chosen per link)");
        if (st == PG_OK)
            o->chunk_bytes = b;
        return st;
    }
    if (!strcmp(name, "device_memory_limit")) {
        uint64_t b = 0;
        pg_status st = parse_bytes(name, value, &b);
        if (st == PG_OK)
            o->device_memory_limit = b;
        return st;
    }
    return pg__error(PG_ERROR_ARGUMENT,
                     "unknown option '%s': expected devices, policy, stream_policy, "
                     "parent_stream_policy, execution, prefetch, interconnect, "
                     "exploration_threshold, log, trace, cache_dir, check, "
                     "device_memory_limit, elide_copies, chunk_bytes, profile, models, "
                     "power_limit, power_watts, ranks, split or share",
                     name);
}

/* The forms `devices` takes are the registered backends' (devices/registry.c); a string that
 * cannot mean anything fails here, before any driver is loaded. */
static pg_status check_devices(const char *d) {
    return pg__devices_check(d);
}

/* The trace (and the timing profile) is written when the runtime is freed: a path that cannot
 * be written must fail now, not lose it all at the end. Opened as the writer will (created if
 * missing; never truncated here), and removed again if this check created it. */
static pg_status check_output_path(const char *what, const char *path) {
    int created = 0;
    int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        created = fd >= 0;
        /* Another process checking the same path (the ranks of one job) made it meanwhile. */
        if (fd < 0 && errno == EEXIST)
            fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    }
    if (fd < 0)
        return pg__error(PG_ERROR_IO,
                         "%s file %s cannot be written: %s (the %s goes there when the "
                         "runtime is closed: give a writable file path)",
                         what, path, strerror(errno), what);
    close(fd);
    if (created)
        unlink(path);
    return PG_OK;
}

/* explicit > environment > default */
static const char *pick(const char *explicit_value, const char *env, const char *def) {
    if (explicit_value)
        return explicit_value;
    const char *e = getenv(env);
    return e && *e ? e : def;
}

/* A boolean option: set (>= 0) wins, else the environment variable, else off. */
static pg_status pick_bool(int set, const char *name, const char *env, int *out) {
    *out = set > 0;
    const char *e = set < 0 ? getenv(env) : NULL;
    return e && *e ? parse_bool(name, e, out) : PG_OK;
}

static pg_status copy_str(char *dst, size_t cap, const char *src, const char *name) {
    if (strlen(src) >= cap)
        return pg__error(PG_ERROR_ARGUMENT, "option %s is too long (%zu characters, max %zu)", name,
                         strlen(src), cap - 1);
    strcpy(dst, src);
    return PG_OK;
}

pg_status pg__options_resolve(const pg_options *o, pg__options_resolved *r) {
    pg_options none;
    if (!o) {
        pg_options_init(&none);
        o = &none;
    }
    memset(r, 0, sizeof *r);
    pg_status st;
    if ((st = copy_str(r->devices, sizeof r->devices, pick(o->devices, "PG_DEVICES", "auto"),
                       "devices")) ||
        (st = check_devices(r->devices)))
        return st;
    if ((st = copy_str(r->policy, sizeof r->policy, pick(o->policy, "PG_POLICY", "earliest-finish"),
                       "policy")))
        return st;

    const char *sp = pick(o->stream_policy, "PG_STREAM_POLICY", "fifo");
    if (!strcmp(sp, "fifo"))
        r->stream_policy = PG__NEW_FIFO;
    else if (!strcmp(sp, "always-new"))
        r->stream_policy = PG__NEW_ALWAYS;
    else
        return pg__error(PG_ERROR_ARGUMENT,
                         "unknown stream_policy '%s': expected fifo or always-new", sp);

    const char *pp = pick(o->parent_stream_policy, "PG_PARENT_STREAM_POLICY", "multigpu-disjoint");
    if (!strcmp(pp, "same-as-parent"))
        r->parent_stream_policy = PG__PARENT_SAME;
    else if (!strcmp(pp, "disjoint"))
        r->parent_stream_policy = PG__PARENT_DISJOINT;
    else if (!strcmp(pp, "multigpu-disjoint"))
        r->parent_stream_policy = PG__PARENT_MULTIGPU_DISJOINT;
    else if (!strcmp(pp, "multigpu-early-disjoint"))
        r->parent_stream_policy = PG__PARENT_MULTIGPU_EARLY_DISJOINT;
    else
        return pg__error(PG_ERROR_ARGUMENT,
                         "unknown parent_stream_policy '%s': expected same-as-parent, disjoint, "
                         "multigpu-disjoint or multigpu-early-disjoint",
                         pp);

    const char *ex = pick(o->execution, "PG_EXECUTION", "async");
    if (!strcmp(ex, "async"))
        r->sync = 0;
    else if (!strcmp(ex, "sync"))
        r->sync = 1;
    else
        return pg__error(PG_ERROR_ARGUMENT, "unknown execution '%s': expected async or sync", ex);

    if ((st = pick_bool(o->prefetch, "prefetch (PG_PREFETCH)", "PG_PREFETCH", &r->prefetch)) ||
        (st = pick_bool(o->elide_copies, "elide_copies (PG_ELIDE_COPIES)", "PG_ELIDE_COPIES",
                        &r->elide_copies)))
        return st;

    if (isnan(o->exploration_threshold))
        return pg__error(PG_ERROR_ARGUMENT,
                         "exploration_threshold is NaN: expected a number in [0, 1] (or a "
                         "negative number for the default)");
    if (o->exploration_threshold >= 0) {
        r->exploration_threshold = o->exploration_threshold;
    } else {
        const char *e = getenv("PG_EXPLORATION_THRESHOLD");
        r->exploration_threshold = 0.1;
        if (e && *e &&
            (st = parse_number("exploration_threshold (PG_EXPLORATION_THRESHOLD)", e,
                               &r->exploration_threshold)))
            return st;
    }
    if (!(r->exploration_threshold >= 0.0 && r->exploration_threshold <= 1.0))
        return pg__error(PG_ERROR_ARGUMENT, "exploration_threshold %g is outside [0, 1]",
                         r->exploration_threshold);

    r->chunk_bytes = o->chunk_bytes;
    if (!r->chunk_bytes) {
        const char *e = getenv("PG_CHUNK_BYTES");
        if (e && *e && (st = parse_bytes("chunk_bytes (PG_CHUNK_BYTES)", e, &r->chunk_bytes)))
            return st;
    }
    if (o->device_memory_limit != PG_DEVICE_MEMORY_UNSET) {
        r->device_memory_limit = o->device_memory_limit;
    } else {
        const char *e = getenv("PG_DEVICE_MEMORY_LIMIT");
        if (e && *e &&
            (st = parse_bytes("device_memory_limit (PG_DEVICE_MEMORY_LIMIT)", e,
                              &r->device_memory_limit)))
            return st;
    }

    if (isnan(o->power_limit) || isinf(o->power_limit))
        return pg__error(PG_ERROR_ARGUMENT,
                         "power_limit is %g: expected watts per node (0 for none, negative for "
                         "the default)",
                         o->power_limit);
    if (o->power_limit >= 0) {
        r->power_limit = o->power_limit;
    } else {
        const char *e = getenv("PG_POWER_LIMIT");
        if (e && *e &&
            ((st = parse_number("power_limit (PG_POWER_LIMIT)", e, &r->power_limit)) ||
             !(r->power_limit >= 0) || isinf(r->power_limit)))
            return st ? st
                      : pg__error(PG_ERROR_ARGUMENT,
                                  "power_limit (PG_POWER_LIMIT) '%s' is not a power budget "
                                  "(watts per node, a number >= 0; 0 for none)",
                                  e);
    }
    double watts[PG_MAX_DEVICES], all;
    if ((st = copy_str(r->power_watts, sizeof r->power_watts,
                       pick(o->power_watts, "PG_POWER_WATTS", ""), "power_watts")) ||
        (st = pg__power_parse_watts(r->power_watts, watts, &all)))
        return st;

    const char *lg = pick(o->log, "PG_LOG", "off");
    if (!strcmp(lg, "off"))
        r->log = 0;
    else if (!strcmp(lg, "info"))
        r->log = 1;
    else if (!strcmp(lg, "debug"))
        r->log = 2;
    else
        return pg__error(PG_ERROR_ARGUMENT, "unknown log level '%s': expected off, info or debug",
                         lg);

    if ((st = copy_str(r->interconnect, sizeof r->interconnect,
                       pick(o->interconnect, "PG_INTERCONNECT", ""), "interconnect")))
        return st;
    if ((st = copy_str(r->trace, sizeof r->trace, pick(o->trace, "PG_TRACE", ""), "trace")) ||
        (r->trace[0] && (st = check_output_path("trace", r->trace))))
        return st;
    if ((st = copy_str(r->profile, sizeof r->profile, pick(o->profile, "PG_PROFILE", ""),
                       "profile")) ||
        (r->profile[0] && (st = check_output_path("profile", r->profile))))
        return st;

    const char *md = pick(o->models, "PG_MODELS", NULL);
    if (!md)
        r->models = !strcmp(r->policy, "min-finish-time");
    else if (!strcmp(md, "on"))
        r->models = 1;
    else if (!strcmp(md, "off"))
        r->models = 0;
    else
        return pg__error(PG_ERROR_ARGUMENT, "unknown models '%s': expected off or on", md);

    const char *spl = pick(o->split, "PG_SPLIT", "auto");
    if (!strcmp(spl, "auto"))
        r->split = 1;
    else if (!strcmp(spl, "off"))
        r->split = 0;
    else
        return pg__error(PG_ERROR_ARGUMENT,
                         "unknown split '%s': expected auto (one launch over several devices, "
                         "for kernels whose signature says what each block writes) or off",
                         spl);

    const char *sh = pick(o->share, "PG_SHARE", "node");
    if (!strcmp(sh, "node"))
        r->share = 1;
    else if (!strcmp(sh, "off"))
        r->share = 0;
    else
        return pg__error(PG_ERROR_ARGUMENT,
                         "unknown share '%s': expected node (share this machine's devices with "
                         "this user's other processes) or off (schedule alone)",
                         sh);

    const char *rk = pick(o->ranks, "PG_RANKS", "auto");
    if (!strcmp(rk, "auto"))
        r->ranks = PG__RANKS_AUTO;
    else if (!strcmp(rk, "mpi"))
        r->ranks = PG__RANKS_MPI;
    else if (!strcmp(rk, "off"))
        r->ranks = PG__RANKS_OFF;
    else
        return pg__error(PG_ERROR_ARGUMENT, "unknown ranks '%s': expected auto, mpi or off", rk);

    const char *ck = pick(o->check, "PG_CHECK", "off");
    if (!strcmp(ck, "off"))
        r->check_bounds = 0;
    else if (!strcmp(ck, "bounds"))
        r->check_bounds = 1;
    else
        return pg__error(PG_ERROR_ARGUMENT, "unknown check '%s': expected off or bounds", ck);

    const char *cd = pick(o->cache_dir, "PG_CACHE_DIR", NULL);
    char def[1024];
    if (!cd) {
        const char *xdg = getenv("XDG_CACHE_HOME");
        const char *home = getenv("HOME");
        if (xdg && *xdg)
            snprintf(def, sizeof def, "%s/polygpu", xdg);
        else if (home && *home)
            snprintf(def, sizeof def, "%s/.cache/polygpu", home);
        else /* one per user: a shared folder would be refused as writable by others */
            snprintf(def, sizeof def, "/tmp/polygpu-cache-%u", (unsigned)geteuid());
        cd = def;
    }
    return copy_str(r->cache_dir, sizeof r->cache_dir, cd, "cache_dir");
}
