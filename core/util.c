/* util.c: small shared helpers of core — the clock, logging, freeing a returned string. */
#include "core/util.h"
#include "core/check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t pg__now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void pg__log(pg__runtime *rt, int level, const char *fmt, ...) {
    if (rt->opt.log < level)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "polygpu: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void pg_string_free(char *s) {
    pg__free(s);
}

_Noreturn void pg__check_failed(const char *file, int line, const char *check, const char *why) {
    fprintf(stderr, "polygpu: state check %s failed at %s:%d: %s\n", check, file, line, why);
    fflush(stderr);
    abort();
}
