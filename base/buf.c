/* buf.c: the growable printf string (buf.h). */
#include "base/buf.h"

#include "base/alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void pg__buf_printf(pg__buf *b, const char *fmt, ...) {
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int n = vsnprintf(b->data ? b->data + b->len : NULL, b->data ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = 1;
            return;
        }
        if (b->data && (size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        char *d = pg__realloc(b->data, cap);
        if (!d) {
            b->failed = 1;
            return;
        }
        b->data = d;
        b->cap = cap;
    }
}

void pg__buf_json_string(pg__buf *b, const char *s) {
    pg__buf_printf(b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            pg__buf_printf(b, "\\%c", c);
        else if (c < 0x20)
            pg__buf_printf(b, "\\u%04x", c);
        else
            pg__buf_printf(b, "%c", c);
    }
    pg__buf_printf(b, "\"");
}
