/* error.c: thread-local error message and detail log of the last failed call. */
#include "base/error.h"
#include "base/alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char message[2048];
static _Thread_local char *detail;

pg_status pg__error(pg_status s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    pg__free(detail);
    detail = NULL;
    return s;
}

pg_status pg__error_wrap(pg_status s, const char *fmt, ...) {
    char outer[sizeof message];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(outer, sizeof outer, fmt, ap);
    va_end(ap);
    size_t len = n < 0 ? 0 : (size_t)n < sizeof outer ? (size_t)n : sizeof outer - 1;
    if (message[0] && len + 2 < sizeof message) {
        /* The cause goes after "<outer>: ", cut at the end if the chain is too long. */
        size_t inner = strlen(message), room = sizeof message - 1 - len - 2;
        if (inner > room)
            inner = room;
        memmove(message + len + 2, message, inner);
        message[len + 2 + inner] = '\0';
        memcpy(message, outer, len);
        message[len] = ':';
        message[len + 1] = ' ';
    } else {
        memcpy(message, outer, len + 1);
        message[len] = '\0';
    }
    return s;
}

void pg__error_set_log(const char *log) {
    pg__free(detail);
    detail = log ? pg__strdup(log) : NULL;
}

void pg__error_clear(void) {
    message[0] = '\0';
    pg__free(detail);
    detail = NULL;
}

const char *pg_last_error(void) {
    return message;
}

const char *pg_last_error_log(void) {
    return detail ? detail : "";
}

const char *pg_status_name(pg_status s) {
    switch (s) {
    case PG_OK:
        return "PG_OK";
    case PG_ERROR_ARGUMENT:
        return "PG_ERROR_ARGUMENT";
    case PG_ERROR_STATE:
        return "PG_ERROR_STATE";
    case PG_ERROR_COMPILE:
        return "PG_ERROR_COMPILE";
    case PG_ERROR_DEVICE:
        return "PG_ERROR_DEVICE";
    case PG_ERROR_OUT_OF_MEMORY:
        return "PG_ERROR_OUT_OF_MEMORY";
    case PG_ERROR_NOT_FOUND:
        return "PG_ERROR_NOT_FOUND";
    case PG_ERROR_UNSUPPORTED:
        return "PG_ERROR_UNSUPPORTED";
    case PG_ERROR_IO:
        return "PG_ERROR_IO";
    case PG_ERROR_INTERNAL:
        return "PG_ERROR_INTERNAL";
    case PG_ERROR_TIMEOUT:
        return "PG_ERROR_TIMEOUT";
    case PG_ERROR_INTERRUPTED:
        return "PG_ERROR_INTERRUPTED";
    }
    return "PG_ERROR_UNKNOWN";
}
