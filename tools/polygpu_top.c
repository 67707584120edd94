/* polygpu-top: a live view of the node this user's polygpu processes share (pg_node_status):
 * per device the work in flight, the memory held and the clients, then per client its pid,
 * language, devices, work and memory. --json prints the status as JSON (once: for scripts);
 * --once prints the table once; otherwise it redraws every --interval seconds (default 1). */
#include "polygpu.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A tiny reader for the library's own JSON (objects, arrays, strings, integers). */
typedef struct jv {
    enum { J_NUM, J_STR, J_ARR, J_OBJ } t;
    long long num;
    char *str;
    struct jv *items; /* J_ARR, J_OBJ (values) */
    char **keys;      /* J_OBJ */
    int n;
} jv;

static const char *skip(const char *p) {
    while (isspace((unsigned char)*p))
        p++;
    return p;
}

static const char *parse(const char *p, jv *out, int depth);

static const char *parse_str(const char *p, char **out) {
    if (*p != '"')
        return NULL;
    size_t cap = strlen(p), n = 0;
    char *s = malloc(cap + 1);
    if (!s)
        return NULL;
    for (p++; *p && *p != '"'; p++) {
        if (*p == '\\' && p[1]) {
            p++;
            if (*p == 'u' && strlen(p) >= 5) {
                s[n++] = (char)strtol((char[]){p[1], p[2], p[3], p[4], 0}, NULL, 16);
                p += 4;
                continue;
            }
        }
        s[n++] = *p;
    }
    s[n] = '\0';
    *out = s;
    return *p == '"' ? p + 1 : NULL;
}

static const char *parse(const char *p, jv *out, int depth) {
    memset(out, 0, sizeof *out);
    p = skip(p);
    if (!p || depth > 16)
        return NULL;
    if (*p == '{' || *p == '[') {
        int obj = *p == '{';
        out->t = obj ? J_OBJ : J_ARR;
        p = skip(p + 1);
        if (*p == (obj ? '}' : ']'))
            return p + 1;
        for (;;) {
            jv *items = realloc(out->items, (size_t)(out->n + 1) * sizeof *items);
            char **keys = obj ? realloc(out->keys, (size_t)(out->n + 1) * sizeof *keys) : NULL;
            if (!items || (obj && !keys))
                return NULL;
            out->items = items;
            if (obj) {
                out->keys = keys;
                if (!(p = parse_str(skip(p), &keys[out->n])) || *(p = skip(p)) != ':')
                    return NULL;
                p++;
            }
            if (!(p = parse(p, &items[out->n++], depth + 1)))
                return NULL;
            p = skip(p);
            if (*p == ',')
                p++;
            else if (*p == (obj ? '}' : ']'))
                return p + 1;
            else
                return NULL;
        }
    }
    if (*p == '"') {
        out->t = J_STR;
        return parse_str(p, &out->str);
    }
    char *end;
    out->t = J_NUM;
    out->num = strtoll(p, &end, 10);
    return end == p ? NULL : end;
}

static void jv_free(jv *v) {
    for (int i = 0; i < v->n; i++) {
        jv_free(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
}

static const jv *get(const jv *o, const char *key) {
    static const jv none = {J_NUM, 0, NULL, NULL, NULL, 0};
    for (int i = 0; o->t == J_OBJ && i < o->n; i++)
        if (!strcmp(o->keys[i], key))
            return &o->items[i];
    return &none;
}

static void bytes(char *out, size_t size, long long b) {
    const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    snprintf(out, size, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
}

static void list(char *out, size_t size, const jv *a, int numbers) {
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; a->t == J_ARR && i < a->n && len < size; i++) {
        if (numbers)
            len += (size_t)snprintf(out + len, size - len, "%s%lld", i ? "," : "", a->items[i].num);
        else
            len += (size_t)snprintf(out + len, size - len, "%s%s", i ? "," : "",
                                    a->items[i].str ? a->items[i].str : "?");
    }
}

static int show(int json) {
    char *s = NULL;
    if (pg_node_status(&s) != PG_OK) {
        fprintf(stderr, "polygpu-top: %s\n", pg_last_error());
        return 1;
    }
    if (json) {
        printf("%s\n", s);
        pg_string_free(s);
        return 0;
    }
    jv v;
    const char *end = parse(s, &v, 0);
    pg_string_free(s);
    if (!end) {
        fprintf(stderr, "polygpu-top: unreadable status\n");
        jv_free(&v);
        return 1;
    }
    const jv *devs = get(&v, "devices"), *cls = get(&v, "clients");
    char b[32], l[512];
    printf("%-44s %9s %12s  %s\n", "DEVICE", "INFLIGHT", "MEMORY", "CLIENTS (pids)");
    for (int i = 0; devs->t == J_ARR && i < devs->n; i++) {
        const jv *d = &devs->items[i];
        bytes(b, sizeof b, get(d, "bytes")->num);
        list(l, sizeof l, get(d, "clients"), 1);
        printf("%-44s %9lld %12s  %s\n", get(d, "device")->str ? get(d, "device")->str : "?",
               get(d, "inflight")->num, b, l);
    }
    printf("\n%-8s %-9s %9s %12s  %s\n", "PID", "LANGUAGE", "INFLIGHT", "MEMORY", "DEVICES");
    for (int i = 0; cls->t == J_ARR && i < cls->n; i++) {
        const jv *c = &cls->items[i];
        bytes(b, sizeof b, get(c, "bytes")->num);
        list(l, sizeof l, get(c, "devices"), 0);
        printf("%-8lld %-9s %9lld %12s  %s\n", get(c, "pid")->num,
               get(c, "language")->str ? get(c, "language")->str : "?", get(c, "inflight")->num, b,
               l);
    }
    if (cls->t != J_ARR || !cls->n)
        printf("(no polygpu process of this user shares the node now)\n");
    jv_free(&v);
    return 0;
}

int main(int argc, char **argv) {
    int json = 0, once = 0;
    double interval = 1.0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--once"))
            once = 1;
        else if (!strcmp(argv[i], "--interval") && i + 1 < argc && atof(argv[i + 1]) > 0)
            interval = atof(argv[++i]);
        else {
            fprintf(stderr,
                    "usage: polygpu-top [--once] [--json] [--interval SECONDS]\n"
                    "  A live view of the devices and clients of the node this user's polygpu\n"
                    "  processes share. --json: the status as JSON, once (for scripts);\n"
                    "  --once: the table once. The state is in $PG_NODE_DIR (else /dev/shm)/"
                    "polygpu-<uid>.\n");
            return !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h") ? 0 : 2;
        }
    }
    if (json || once)
        return show(json);
    for (;;) {
        printf("\033[H\033[2J");
        time_t t = time(NULL);
        char when[64];
        strftime(when, sizeof when, "%H:%M:%S", localtime(&t));
        printf("polygpu-top  %s  (every %.1f s; Ctrl-C ends)\n\n", when, interval);
        if (show(0))
            return 1;
        fflush(stdout);
        struct timespec ts = {(time_t)interval, (long)((interval - (long)interval) * 1e9)};
        nanosleep(&ts, NULL);
    }
}
