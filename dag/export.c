/* export.c: a DAG snapshot written out: JSON (stable schema), Graphviz DOT, Chrome trace. */
#include "dag/record.h"

#include "base/buf.h"
#include "base/alloc.h"
#include "base/error.h"

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

static pg_status finish(pg__buf *b, char **out) {
    if (b->failed || !b->data) {
        pg__free(b->data);
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory while exporting");
    }
    *out = b->data;
    return PG_OK;
}

pg_status pg__dag_to_json(const pg_dag *dag, char **out) {
    pg__buf b = {0};
    pg__buf_printf(&b, "{\"vertices\":[");
    for (size_t v = 0; v < dag->nvertices; v++) {
        const pg_dag_vertex_info *r = &dag->vertices[v];
        pg__buf_printf(&b, "%s\n{\"id\":%llu,\"kind\":\"%s\",\"name\":", v ? "," : "",
                       (unsigned long long)r->id, pg__dag_kind_str(r->kind));
        pg__buf_json_string(&b, r->name);
        pg__buf_printf(&b, ",\"device\":%d,\"stream\":%d,\"rank\":%d,\"args\":[", r->device,
                       r->stream, r->rank);
        for (int i = 0; i < r->nargs; i++)
            pg__buf_printf(&b, "%s{\"array\":%llu,\"access\":\"%s\"}", i ? "," : "",
                           (unsigned long long)r->args[i].array, pg__access_str(r->args[i].access));
        pg__buf_printf(&b, "],\"submit_ns\":%llu,\"start_ns\":%llu,\"end_ns\":%llu",
                       (unsigned long long)r->submit_ns, (unsigned long long)r->start_ns,
                       (unsigned long long)r->end_ns);
        if (r->kind == PG_DAG_COPY)
            pg__buf_printf(&b, ",\"bytes\":%llu,\"src\":%d,\"dst\":%d",
                           (unsigned long long)r->bytes, r->src, r->dst);
        if (r->parts) /* one launch split over devices: which part of how many */
            pg__buf_printf(&b, ",\"part\":%d,\"parts\":%d", r->part, r->parts);
        pg__buf_printf(&b, "}");
    }
    pg__buf_printf(&b, "],\n\"edges\":[");
    for (size_t e = 0; e < dag->nedges; e++)
        pg__buf_printf(&b, "%s[%llu,%llu]", e ? "," : "", (unsigned long long)dag->edges[e][0],
                       (unsigned long long)dag->edges[e][1]);
    pg__buf_printf(&b, "]}\n");
    return finish(&b, out);
}

static const char *colors[] = {"lightblue", "palegreen", "lightsalmon", "khaki",
                               "plum",      "lightcyan", "wheat",       "lightpink"};

pg_status pg__dag_to_dot(const pg_dag *dag, char **out) {
    pg__buf b = {0};
    pg__buf_printf(
        &b, "digraph polygpu {\n  rankdir=TB;\n  node [style=filled, fontname=\"Helvetica\"];\n");
    for (size_t v = 0; v < dag->nvertices; v++) {
        const pg_dag_vertex_info *r = &dag->vertices[v];
        const char *fill = r->device < 0 ? "white" : colors[r->device % 8];
        const char *shape = r->kind == PG_DAG_KERNEL ? "box"
                            : r->kind == PG_DAG_COPY ? "ellipse"
                                                     : "note";
        char where[48];
        if (r->device < 0)
            snprintf(where, sizeof where, "host");
        else if (r->stream >= PG_DAG_COPY_STREAM)
            snprintf(where, sizeof where, "device %d, copy stream", r->device);
        else
            snprintf(where, sizeof where, "device %d, stream %d", r->device, r->stream);
        pg__buf_printf(&b, "  n%llu [shape=%s, fillcolor=%s, label=", (unsigned long long)r->id,
                       shape, fill);
        char label[192], part[32] = "";
        if (r->parts)
            snprintf(part, sizeof part, " (part %d/%d)", r->part, r->parts);
        snprintf(label, sizeof label, "#%llu %s%s\n%s", (unsigned long long)r->id, r->name, part,
                 where);
        dot_string(&b, label);
        pg__buf_printf(&b, "%s];\n", r->kind == PG_DAG_COPY ? ", style=\"filled,dashed\"" : "");
    }
    for (size_t e = 0; e < dag->nedges; e++)
        pg__buf_printf(&b, "  n%llu -> n%llu;\n", (unsigned long long)dag->edges[e][0],
                       (unsigned long long)dag->edges[e][1]);
    pg__buf_printf(&b, "}\n");
    return finish(&b, out);
}

pg_status pg__trace_to_json(const pg_dag *dag, char **out) {
    pg__buf b = {0};
    /* With several ranks each rank's host and devices are processes of their own (pids from
     * rank * (PG_MAX_DEVICES + 1)), so that the ranks' files merge into one timeline. */
    int base = dag->nranks > 1 ? dag->rank * (PG_MAX_DEVICES + 1) : 0;
    char who[24] = "";
    if (dag->nranks > 1)
        snprintf(who, sizeof who, "rank %d: ", dag->rank);
    pg__buf_printf(&b, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    pg__buf_printf(
        &b, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":\"%shost\"}}",
        base, who);
    for (int d = 0; d < dag->ndev; d++) {
        const pg__dag_track *t = &dag->dev[d];
        pg__buf_printf(&b,
                       ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":",
                       base + d + 1);
        char name[200];
        snprintf(name, sizeof name, "%sdevice %d: %s", who, d, t->name);
        pg__buf_json_string(&b, name);
        pg__buf_printf(&b, "}}");
        for (int s = 0; s <= PG_DAG_COPY_STREAM; s++) {
            if (s < PG_DAG_COPY_STREAM && s >= t->nstreams)
                continue;
            if (s == PG_DAG_COPY_STREAM && !t->copy_stream)
                continue;
            pg__buf_printf(&b,
                           ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,"
                           "\"args\":{\"name\":\"%s %d\"}}",
                           base + d + 1, s, s == PG_DAG_COPY_STREAM ? "copy stream" : "stream", s);
        }
    }
    for (size_t v = 0; v < dag->nvertices; v++) {
        const pg_dag_vertex_info *r = &dag->vertices[v];
        if (r->end_ns == 0) {
            /* Not timed (GPUs time work only when the runtime was made with the trace option):
             * an instant at submission, so the timeline still shows every call and where. */
            pg__buf_printf(&b, ",\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"%s\",\"name\":",
                           pg__dag_kind_str(r->kind));
            pg__buf_json_string(&b, r->name);
            pg__buf_printf(&b,
                           ",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"args\":{\"id\":%llu,"
                           "\"timed\":false}}",
                           base + r->device + 1, r->stream < 0 ? 0 : r->stream, r->submit_ns / 1e3,
                           (unsigned long long)r->id);
            continue;
        }
        uint64_t dur = r->end_ns > r->start_ns ? r->end_ns - r->start_ns : 0;
        pg__buf_printf(&b, ",\n{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", pg__dag_kind_str(r->kind));
        pg__buf_json_string(&b, r->name);
        /* submit_us against ts shows whether the device waited for the script (start close to
         * submission) or the script ran ahead (work queued long before it started). */
        pg__buf_printf(&b,
                       ",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"id\":%llu,"
                       "\"submit_us\":%.3f",
                       base + r->device + 1, r->stream < 0 ? 0 : r->stream, r->start_ns / 1e3,
                       dur / 1e3, (unsigned long long)r->id, r->submit_ns / 1e3);
        if (r->kind == PG_DAG_COPY)
            pg__buf_printf(&b, ",\"bytes\":%llu", (unsigned long long)r->bytes);
        pg__buf_printf(&b, "}}");
    }
    /* Counters per device: power (W) and energy since the start (J), where known. */
    for (size_t i = 0; i < dag->npower; i++) {
        const pg__dag_power *p = &dag->power[i];
        pg__buf_printf(&b,
                       ",\n{\"ph\":\"C\",\"name\":\"power\",\"pid\":%d,\"ts\":%.3f,"
                       "\"args\":{\"W\":%.3f}}",
                       p->device + 1, p->t_ns / 1e3, p->watts);
        if (p->joules >= 0)
            pg__buf_printf(&b,
                           ",\n{\"ph\":\"C\",\"name\":\"energy\",\"pid\":%d,\"ts\":%.3f,"
                           "\"args\":{\"J\":%.6f}}",
                           p->device + 1, p->t_ns / 1e3, p->joules);
    }
    pg__buf_printf(&b, "\n]}\n");
    return finish(&b, out);
}
