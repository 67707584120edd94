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

const char *pg__gpu_kind_str(pg_gpu_span_kind kind) {
    switch (kind) {
    case PG_GPU_KERNEL:
        return "kernel";
    case PG_GPU_COPY:
        return "copy";
    case PG_GPU_MEMSET:
        return "memset";
    }
    return "?";
}

static const char *gpu_kind_str(pg_gpu_span_kind kind) {
    return pg__gpu_kind_str(kind);
}

/* The vertex with this id, NULL when the snapshot lacks it (vertices are in id order). */
static const pg_dag_vertex_info *vertex_of(const pg_dag *dag, uint64_t id) {
    size_t lo = 0, hi = dag->nvertices;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (dag->vertices[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return id && lo < dag->nvertices && dag->vertices[lo].id == id ? &dag->vertices[lo] : NULL;
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
    pg__buf_printf(&b, "],\n\"gpu_timeline\":");
    pg__buf_json_string(&b, dag->gpu_timeline);
    pg__buf_printf(&b, ",\n\"gpu_spans\":[");
    for (size_t i = 0; i < dag->ngpu; i++) {
        const pg_gpu_span *g = &dag->gpu[i];
        pg__buf_printf(&b,
                       "%s\n{\"id\":%llu,\"kind\":\"%s\",\"device\":%d,\"gpu_stream\":%u,"
                       "\"start_ns\":%llu,\"end_ns\":%llu,\"api_ns\":%llu,\"bytes\":%llu,"
                       "\"copy_kind\":\"%s\",\"name\":",
                       i ? "," : "", (unsigned long long)g->id, gpu_kind_str(g->kind), g->device,
                       g->gpu_stream, (unsigned long long)g->start_ns,
                       (unsigned long long)g->end_ns, (unsigned long long)g->api_ns,
                       (unsigned long long)g->bytes, g->copy_kind);
        pg__buf_json_string(&b, g->name);
        pg__buf_printf(&b, "}");
    }
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
    /* The GPU's own timeline (CUPTI): a row per GPU stream, after polygpu's streams, with what
     * ran there as the GPU timed it; args tie each span to its vertex (id, submit_us) and to the
     * driver call that enqueued it (api_us). */
    for (size_t i = 0; i < dag->ngpu; i++) {
        const pg_gpu_span *g = &dag->gpu[i];
        int seen = 0; /* one row name per (device, GPU stream) */
        for (size_t j = 0; j < i && !seen; j++)
            seen = dag->gpu[j].device == g->device && dag->gpu[j].gpu_stream == g->gpu_stream;
        if (seen)
            continue;
        pg__buf_printf(&b,
                       ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%u,"
                       "\"args\":{\"name\":\"gpu %d stream %u\"}}"
                       ",\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%d,"
                       "\"tid\":%u,\"args\":{\"sort_index\":%u}}",
                       base + g->device + 1, PG__TRACE_GPU_TID + g->gpu_stream, g->device,
                       g->gpu_stream, base + g->device + 1, PG__TRACE_GPU_TID + g->gpu_stream,
                       PG__TRACE_GPU_TID + g->gpu_stream);
    }
    for (size_t i = 0; i < dag->ngpu; i++) {
        const pg_gpu_span *g = &dag->gpu[i];
        const pg_dag_vertex_info *v = vertex_of(dag, g->id);
        uint64_t dur = g->end_ns > g->start_ns ? g->end_ns - g->start_ns : 0;
        pg__buf_printf(&b, ",\n{\"ph\":\"X\",\"cat\":\"gpu_%s\",\"name\":", gpu_kind_str(g->kind));
        pg__buf_json_string(&b, v ? v->name : g->name);
        pg__buf_printf(&b,
                       ",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"id\":%llu,"
                       "\"gpu_name\":",
                       base + g->device + 1, PG__TRACE_GPU_TID + g->gpu_stream, g->start_ns / 1e3,
                       dur / 1e3, (unsigned long long)g->id);
        pg__buf_json_string(&b, g->name);
        if (v)
            pg__buf_printf(&b, ",\"submit_us\":%.3f,\"stream\":%d", v->submit_ns / 1e3, v->stream);
        if (g->api_ns)
            pg__buf_printf(&b, ",\"api_us\":%.3f", g->api_ns / 1e3);
        if (g->kind != PG_GPU_KERNEL)
            pg__buf_printf(&b, ",\"bytes\":%llu", (unsigned long long)g->bytes);
        if (g->copy_kind[0])
            pg__buf_printf(&b, ",\"copy_kind\":\"%s\"", g->copy_kind);
        pg__buf_printf(&b, "}}");
    }
    /* Whether the GPU rows are there, and why not: a label of the host's process (metadata,
     * not an event: readers of the events see only operations), and in otherData. */
    {
        char label[sizeof dag->gpu_timeline + 32];
        snprintf(label, sizeof label, "gpu timeline: %s", dag->gpu_timeline);
        pg__buf_printf(&b,
                       ",\n{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":%d,\"args\":{"
                       "\"labels\":",
                       base);
        pg__buf_json_string(&b, label);
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
    pg__buf_printf(&b, "\n],\n\"otherData\":{\"gpu_timeline\":");
    pg__buf_json_string(&b, dag->gpu_timeline);
    pg__buf_printf(&b, "}}\n");
    return finish(&b, out);
}
