/* export.c: the DAG as JSON (stable schema, read by the bindings) and as Graphviz DOT. */
#include "core/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A DOT quoted string: quotes and backslashes escaped, line breaks as DOT's \n. */
static void dot_string(pg__buf *b, const char *s) {
    pg__buf_printf(b, "\"");
    for (; *s; s++) {
        if (*s == '\n')
            pg__buf_printf(b, "\\n");
        else if (*s == '"' || *s == '\\')
            pg__buf_printf(b, "\\%c", *s);
        else if ((unsigned char)*s >= 0x20)
            pg__buf_printf(b, "%c", *s);
    }
    pg__buf_printf(b, "\"");
}

static const char *kind_name(pg__comp_kind k) {
    switch (k) {
    case PG__KERNEL:
        return "kernel";
    case PG__HOST_READ:
        return "host_read";
    case PG__HOST_WRITE:
        return "host_write";
    case PG__COPY:
        return "copy";
    }
    return "?";
}

static const char *access_name(pg_access a) {
    return a == PG_ACCESS_IN ? "in" : a == PG_ACCESS_OUT ? "out" : "inout";
}

/* Records of ids [lo, hi], oldest first. */
static void range(pg__runtime *rt, uint64_t *lo, uint64_t *hi) {
    *hi = rt->next_comp_id;
    *lo = *hi >= PG__DAG_HISTORY ? *hi - PG__DAG_HISTORY + 1 : 1;
}

static pg__record *find(pg__runtime *rt, uint64_t id) {
    pg__record *r = &rt->records[id % PG__DAG_HISTORY];
    return r->id == id ? r : NULL;
}

static pg_status finish(pg__buf *b, char **out) {
    if (b->failed || !b->data) {
        pg__free(b->data);
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory while exporting");
    }
    *out = b->data;
    return PG_OK;
}

pg_status pg__dag_to_json(pg__runtime *rt, char **out) {
    pg__buf b = {0};
    uint64_t lo, hi;
    range(rt, &lo, &hi);
    pg__buf_printf(&b, "{\"vertices\":[");
    int first = 1;
    for (uint64_t id = lo; id <= hi && id; id++) {
        pg__record *r = find(rt, id);
        if (!r)
            continue;
        pg__buf_printf(&b, "%s\n{\"id\":%llu,\"kind\":\"%s\",\"name\":", first ? "" : ",",
                       (unsigned long long)r->id, kind_name(r->kind));
        first = 0;
        pg__buf_json_string(&b, r->name);
        pg__buf_printf(&b, ",\"device\":%d,\"stream\":%d,\"args\":[", r->device, r->stream);
        for (int i = 0; i < r->nargs; i++)
            pg__buf_printf(&b, "%s{\"array\":%llu,\"access\":\"%s\"}", i ? "," : "",
                           (unsigned long long)r->arg_ids[i], access_name(r->arg_access[i]));
        pg__buf_printf(&b, "],\"submit_ns\":%llu,\"start_ns\":%llu,\"end_ns\":%llu",
                       (unsigned long long)r->submit_ns, (unsigned long long)r->start_ns,
                       (unsigned long long)r->end_ns);
        if (r->kind == PG__COPY)
            pg__buf_printf(&b, ",\"bytes\":%llu,\"src\":%d,\"dst\":%d",
                           (unsigned long long)r->bytes, r->src - 1, r->dst - 1);
        pg__buf_printf(&b, "}");
    }
    pg__buf_printf(&b, "],\n\"edges\":[");
    first = 1;
    for (uint64_t id = lo; id <= hi && id; id++) {
        pg__record *r = find(rt, id);
        for (int i = 0; r && i < r->nparents; i++) {
            if (!find(rt, r->parent_ids[i]))
                continue;
            pg__buf_printf(&b, "%s[%llu,%llu]", first ? "" : ",",
                           (unsigned long long)r->parent_ids[i], (unsigned long long)id);
            first = 0;
        }
    }
    pg__buf_printf(&b, "]}\n");
    return finish(&b, out);
}

static const char *colors[] = {"lightblue", "palegreen", "lightsalmon", "khaki",
                               "plum",      "lightcyan", "wheat",       "lightpink"};

pg_status pg__dag_to_dot(pg__runtime *rt, char **out) {
    pg__buf b = {0};
    uint64_t lo, hi;
    range(rt, &lo, &hi);
    pg__buf_printf(
        &b, "digraph polygpu {\n  rankdir=TB;\n  node [style=filled, fontname=\"Helvetica\"];\n");
    for (uint64_t id = lo; id <= hi && id; id++) {
        pg__record *r = find(rt, id);
        if (!r)
            continue;
        const char *fill = r->device < 0 ? "white" : colors[r->device % 8];
        const char *shape = r->kind == PG__KERNEL ? "box"
                            : r->kind == PG__COPY ? "ellipse"
                                                  : "note";
        char where[48];
        if (r->device < 0)
            snprintf(where, sizeof where, "host");
        else if (r->stream >= PG__MAX_STREAMS)
            snprintf(where, sizeof where, "device %d, copy stream", r->device);
        else
            snprintf(where, sizeof where, "device %d, stream %d", r->device, r->stream);
        pg__buf_printf(&b, "  n%llu [shape=%s, fillcolor=%s, label=", (unsigned long long)id, shape,
                       fill);
        char label[160];
        snprintf(label, sizeof label, "#%llu %s\n%s", (unsigned long long)id, r->name, where);
        dot_string(&b, label);
        pg__buf_printf(&b, "%s];\n", r->kind == PG__COPY ? ", style=\"filled,dashed\"" : "");
    }
    for (uint64_t id = lo; id <= hi && id; id++) {
        pg__record *r = find(rt, id);
        for (int i = 0; r && i < r->nparents; i++)
            if (find(rt, r->parent_ids[i]))
                pg__buf_printf(&b, "  n%llu -> n%llu;\n", (unsigned long long)r->parent_ids[i],
                               (unsigned long long)id);
    }
    pg__buf_printf(&b, "}\n");
    return finish(&b, out);
}

pg_status pg__trace_to_json(pg__runtime *rt, char **out) {
    pg__buf b = {0};
    uint64_t lo, hi;
    range(rt, &lo, &hi);
    pg__buf_printf(&b, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    pg__buf_printf(
        &b, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"args\":{\"name\":\"host\"}}");
    for (int d = 0; d < rt->ndev; d++) {
        pg__buf_printf(
            &b, ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":", d + 1);
        char name[160];
        snprintf(name, sizeof name, "device %d: %s", d, rt->dev[d].info.name);
        pg__buf_json_string(&b, name);
        pg__buf_printf(&b, "}}");
        for (int s = 0; s <= PG__MAX_STREAMS; s++) {
            if (s < PG__MAX_STREAMS && s >= rt->dev[d].nstreams)
                continue;
            if (s == PG__MAX_STREAMS && !rt->dev[d].copy_stream)
                continue;
            pg__buf_printf(&b,
                           ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,"
                           "\"args\":{\"name\":\"%s %d\"}}",
                           d + 1, s, s == PG__MAX_STREAMS ? "copy stream" : "stream", s);
        }
    }
    for (uint64_t id = lo; id <= hi && id; id++) {
        pg__record *r = find(rt, id);
        if (!r)
            continue;
        if (r->end_ns == 0) {
            /* Not timed (GPUs time work only when the runtime was made with the trace option):
             * an instant at submission, so the timeline still shows every call and where. */
            pg__buf_printf(
                &b, ",\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"%s\",\"name\":", kind_name(r->kind));
            pg__buf_json_string(&b, r->name);
            pg__buf_printf(&b,
                           ",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"args\":{\"id\":%llu,"
                           "\"timed\":false}}",
                           r->device + 1, r->stream < 0 ? 0 : r->stream, r->submit_ns / 1e3,
                           (unsigned long long)r->id);
            continue;
        }
        uint64_t dur = r->end_ns > r->start_ns ? r->end_ns - r->start_ns : 0;
        pg__buf_printf(&b, ",\n{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", kind_name(r->kind));
        pg__buf_json_string(&b, r->name);
        /* submit_us against ts shows whether the device waited for the script (start close to
         * submission) or the script ran ahead (work queued long before it started). */
        pg__buf_printf(&b,
                       ",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"id\":%llu,"
                       "\"submit_us\":%.3f",
                       r->device + 1, r->stream < 0 ? 0 : r->stream, r->start_ns / 1e3, dur / 1e3,
                       (unsigned long long)r->id, r->submit_ns / 1e3);
        if (r->kind == PG__COPY)
            pg__buf_printf(&b, ",\"bytes\":%llu", (unsigned long long)r->bytes);
        pg__buf_printf(&b, "}}");
    }
    pg__buf_printf(&b, "\n]}\n");
    return finish(&b, out);
}

static pg_status write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f)
        return pg__error(PG_ERROR_IO, "cannot open '%s' for writing: %s", path, strerror(errno));
    size_t n = strlen(text);
    int ok = fwrite(text, 1, n, f) == n;
    ok = (fclose(f) == 0) && ok;
    return ok ? PG_OK : pg__error(PG_ERROR_IO, "writing '%s' failed (disk full?)", path);
}

static pg__runtime *lock_rt(pg_runtime *h, const char *fn) {
    pg__runtime *rt;
    if (!pg__enter((uint64_t)(uintptr_t)h, PG__H_RUNTIME, fn, &rt))
        return NULL;
    pg__exec_sweep(rt, 1 << 30); /* fold in timings of what has finished */
    return rt;
}

pg_status pg_dag_export_string(pg_runtime *h, pg_dag_format format, char **out) {
    pg__error_clear();
    if (!out)
        return pg__error(PG_ERROR_ARGUMENT, "pg_dag_export_string: out must not be NULL");
    if (format != PG_DAG_DOT && format != PG_DAG_JSON)
        return pg__error(PG_ERROR_ARGUMENT, "unknown DAG format %d: use PG_DAG_DOT or PG_DAG_JSON",
                         (int)format);
    pg__runtime *rt = lock_rt(h, "pg_dag_export");
    if (!rt)
        return PG_ERROR_STATE;
    pg_status st = format == PG_DAG_JSON ? pg__dag_to_json(rt, out) : pg__dag_to_dot(rt, out);
    pg__leave(rt);
    return st;
}

pg_status pg_dag_export(pg_runtime *h, pg_dag_format format, const char *path) {
    if (!path)
        return pg__error(PG_ERROR_ARGUMENT, "pg_dag_export: path must not be NULL");
    char *s;
    pg_status st = pg_dag_export_string(h, format, &s);
    if (st)
        return st;
    st = write_file(path, s);
    pg__free(s);
    return st;
}

pg_status pg__trace_write_file(pg__runtime *rt, const char *path) {
    pthread_mutex_lock(&rt->mu);
    pg__exec_sweep(rt, 1 << 30);
    char *s;
    pg_status st = pg__trace_to_json(rt, &s);
    pthread_mutex_unlock(&rt->mu);
    if (st)
        return st;
    st = write_file(path, s);
    pg__free(s);
    return st;
}

pg_status pg_trace_write(pg_runtime *h, const char *path) {
    pg__error_clear();
    if (!path)
        return pg__error(PG_ERROR_ARGUMENT, "pg_trace_write: path must not be NULL");
    pg__runtime *rt;
    if (!pg__enter((uint64_t)(uintptr_t)h, PG__H_RUNTIME, "pg_trace_write", &rt))
        return PG_ERROR_STATE;
    pthread_mutex_unlock(&rt->mu);
    pg_status st = pg__trace_write_file(rt, path);
    pg__unpin(rt);
    return st;
}
