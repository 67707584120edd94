/* registry.c: the table of device backends and opening a devices string through it. A new
 * backend is its folder (devices/NAME/, built by the CMake glob) plus one line here. */
#include "devices/registry.h"

#include "base/error.h"

#include <stdio.h>
#include <string.h>

extern const pg__backend_entry pg__host_entry; /* devices/host/host_backend.c */
extern const pg__backend_entry pg__cuda_entry; /* devices/cuda/cu_backend.c */
extern const pg__backend_entry pg__sim_entry;  /* devices/sim/sim_backend.c */

/* One line per backend. Order matters twice: "auto" tries the in_auto entries in this order,
 * and falls back to the first CPU-class one. */
static const pg__backend_entry *const table[] = {
    &pg__cuda_entry,
    &pg__host_entry,
    &pg__sim_entry,
};
#define NTABLE ((int)(sizeof table / sizeof table[0]))

const pg__backend_entry *pg__registry_at(int i) {
    return i >= 0 && i < NTABLE ? table[i] : NULL;
}

const pg__backend_entry *pg__registry_find(const char *name, size_t len) {
    for (int i = 0; i < NTABLE; i++)
        if (strlen(table[i]->name) == len && !strncmp(table[i]->name, name, len))
            return table[i];
    return NULL;
}

int pg__registry_can_copy(const pg__backend_entry *x, const pg__backend_entry *y) {
    return x == y || x->host_visible || y->host_visible;
}

const pg__backend_entry *pg__registry_profile_writer(void) {
    for (int i = 0; i < NTABLE; i++)
        if (table[i]->profile_append)
            return table[i];
    return NULL;
}

void pg__devices_forms(char *out, size_t cap) {
    size_t n = (size_t)snprintf(out, cap, "auto (the GPUs if any, else one CPU device)");
    for (int i = 0; i < NTABLE && n < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, ", %s", table[i]->forms);
    if (n < cap)
        snprintf(out + n, cap - n, "; several joined by commas (cuda,host:2)");
}

/* A part of a devices string: "auto", or a registered name alone or followed by ':'. */
static int part_start(const char *p, const pg__backend_entry **e) {
    size_t len = strcspn(p, ":,");
    *e = pg__registry_find(p, len);
    if (*e)
        return 1;
    return len == 4 && !strncmp(p, "auto", 4) && (p[4] == 0 || p[4] == ',');
}

#define MAX_PARTS 4

typedef struct part {
    const pg__backend_entry *e; /* NULL: auto */
    char spec[128];             /* after "name:" ("" for the bare name) */
} part;

/* Split "cuda:0,2,host:2" into its parts: a comma starts a new part only before a registered
 * name or "auto" (commas inside a part, "cuda:0,2", "sim:x,host_time=0", stay). */
static pg_status split(const char *s, part *parts, int *n) {
    const pg__backend_entry *e;
    char forms[512];
    *n = 0;
    if (!part_start(s, &e))
        goto bad;
    for (const char *p = s; *p;) {
        if (*n == MAX_PARTS)
            return pg__error(PG_ERROR_ARGUMENT, "devices '%s': at most %d backends in one runtime",
                             s, MAX_PARTS);
        part_start(p, &e);
        const char *q = p + (e ? strlen(e->name) : 4);
        const char *end = q;
        for (const pg__backend_entry *e2; *end; end++)
            if (*end == ',' && part_start(end + 1, &e2))
                break;
        if (*q == ':' && q + 1 == end)
            goto bad; /* "host:" */
        size_t len = (size_t)(end - q) - (*q == ':');
        if (*q == ':' && !e)
            goto bad; /* "auto:..." */
        if (len >= sizeof parts[0].spec)
            return pg__error(PG_ERROR_ARGUMENT, "devices '%s': a part is too long", s);
        parts[*n].e = e;
        memcpy(parts[*n].spec, q + (*q == ':'), len);
        parts[*n].spec[len] = 0;
        for (int i = 0; i < *n; i++)
            if (parts[i].e == e)
                return pg__error(PG_ERROR_ARGUMENT,
                                 "devices '%s' names %s twice: each backend (and auto) at most "
                                 "once, with all its devices in one part (cuda:0,2)",
                                 s, e ? e->name : "auto");
        ++*n;
        p = *end ? end + 1 : end;
    }
    return PG_OK;
bad:
    pg__devices_forms(forms, sizeof forms);
    return pg__error(PG_ERROR_ARGUMENT, "devices '%s' is not valid: expected %s", s, forms);
}

pg_status pg__devices_check(const char *spec) {
    part parts[MAX_PARTS];
    int n;
    pg_status st = split(spec, parts, &n);
    for (int i = 0; !st && i < n; i++)
        if (parts[i].e && parts[i].e->check && (st = parts[i].e->check(parts[i].spec))) {
            char forms[512];
            pg__devices_forms(forms, sizeof forms);
            pg__error_wrap(st, "devices '%s' is not valid (expected %s)", spec, forms);
        }
    return st;
}

/* Open one backend; a GPU-class one opened with an empty spec on a node whose GPUs several
 * ranks share keeps this rank's (found by opening them all first). */
static pg_status open_one(const pg__backend_entry *e, const char *spec, const pg__open_args *a,
                          const pg__backend_ops **ops, pg__backend **b, int *n) {
    pg_status st = e->open(spec, a, ops, b, n);
    if (st || e->device_class != PG_CLASS_GPU || spec[0] || a->local_size <= 1 || !a->share)
        return st;
    char mine[128];
    a->share(a->local_rank, a->local_size, *n, mine, sizeof mine);
    if (!mine[0])
        return PG_OK;
    (*ops)->close(*b);
    *b = NULL;
    return e->open(mine, a, ops, b, n);
}

/* auto: the first in_auto backend that opens, else (alone) the first CPU-class one, or (beside
 * other parts: "auto,host:2") nothing, *used NULL. */
static pg_status open_auto(const pg__open_args *a, int alone, const pg__backend_entry **used,
                           const pg__backend_ops **ops, pg__backend **b, int *n, char *why,
                           size_t cap) {
    char no[512] = "";
    for (int i = 0; i < NTABLE; i++) {
        if (!table[i]->in_auto)
            continue;
        if (open_one(table[i], "", a, ops, b, n) == PG_OK) {
            *used = table[i];
            return PG_OK;
        }
        size_t l = strlen(no);
        snprintf(no + l, sizeof no - l, "%s%s", l ? "; " : "", pg_last_error());
        pg__error_clear();
    }
    if (why)
        snprintf(why, cap, "%s", no);
    *used = NULL;
    if (!alone)
        return PG_OK;
    for (int i = 0; i < NTABLE; i++) {
        if (table[i]->device_class != PG_CLASS_CPU)
            continue;
        pg_status st = open_one(table[i], "", a, ops, b, n);
        if (!st)
            *used = table[i];
        return st ? pg__error_wrap(st, "no usable GPU (%s), and no CPU device instead", no) : st;
    }
    return pg__error(PG_ERROR_DEVICE, "no usable GPU (%s), and no CPU-device backend", no);
}

pg_status pg__devices_open(const char *spec, const pg__open_args *a, pg__devices *out,
                           char *why_auto, size_t why_cap) {
    part parts[MAX_PARTS];
    int n;
    memset(out, 0, sizeof *out);
    if (why_auto && why_cap)
        why_auto[0] = 0;
    pg_status st = split(spec, parts, &n);
    const pg__backend_entry *e[MAX_PARTS];
    const pg__backend_ops *ops[MAX_PARTS];
    pg__backend *b[MAX_PARTS];
    int nd[MAX_PARTS], opened = 0, total = 0;
    for (int i = 0; !st && i < n; i++) {
        int k = opened;
        if (!parts[i].e)
            st = open_auto(a, n == 1, &e[k], &ops[k], &b[k], &nd[k], why_auto, why_cap);
        else if ((st = open_one(parts[i].e, parts[i].spec, a, &ops[k], &b[k], &nd[k])) == PG_OK)
            e[k] = parts[i].e;
        if (st)
            break;
        if (!e[k])
            continue; /* auto beside other parts, and no GPU */
        opened++;
        total += nd[k];
        if (total > PG_MAX_DEVICES)
            st = pg__error(PG_ERROR_UNSUPPORTED, "%d devices; polygpu drives at most %d", total,
                           PG_MAX_DEVICES);
    }
    /* Two parts that are one backend ("auto,cuda" where auto found the GPUs). */
    for (int i = 0; !st && i < opened; i++)
        for (int j = 0; !st && j < i; j++)
            if (e[i] == e[j])
                st = pg__error(PG_ERROR_ARGUMENT,
                               "devices '%s' opens %s twice (auto is the GPUs): name each "
                               "backend once",
                               spec, e[i]->name);
    for (int i = 0; !st && i < opened; i++)
        for (int j = 0; !st && j < i; j++)
            if (!pg__registry_can_copy(e[i], e[j]))
                st = pg__error(PG_ERROR_UNSUPPORTED,
                               "devices '%s': %s and %s devices cannot copy to each other (neither "
                               "has host memory as device memory)",
                               spec, e[j]->name, e[i]->name);
    if (!st && opened > 1)
        st = pg__mixed_open(opened, e, ops, b, nd, a->check_bounds, &out->ops, &out->b);
    if (st) {
        for (int i = 0; i < opened; i++)
            ops[i]->close(b[i]);
        return st;
    }
    if (opened == 1) {
        out->ops = ops[0];
        out->b = b[0];
    }
    out->nbackends = opened;
    for (int i = 0, d = 0; i < opened; i++)
        for (int k = 0; k < nd[i]; k++)
            out->entry[d++] = e[i];
    out->ndev = total;
    return PG_OK;
}
