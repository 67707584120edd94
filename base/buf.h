/* buf.h: a growable string built with printf, for the exporters and the CPU-device compiler.
 * The owner frees data; a failed allocation sets failed and makes later appends no-ops, so a
 * caller checks once at the end. */
#ifndef PG_BASE_BUF_H
#define PG_BASE_BUF_H

#include "base/error.h"

#include <stddef.h>

typedef struct pg__buf {
    char *data; /* NUL-terminated once anything was appended; owned */
    size_t len, cap;
    int failed;
} pg__buf;

void pg__buf_printf(pg__buf *b, const char *fmt, ...) PG__PRINTF(2, 3);
/* s as a JSON string literal, quotes included. */
void pg__buf_json_string(pg__buf *b, const char *s);

#endif
