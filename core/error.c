/* error.c: thread-local error message and detail log of the last failed call. */
#include "core/error.h"
#include "core/alloc.h"

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
