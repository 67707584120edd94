/* check.h: the C suite's assertions. A failed CHECK prints where and why, and the test exits 1
 * at the end (it keeps running so one run shows every failure). */
#ifndef PG_CHECK_H
#define PG_CHECK_H

#include "polygpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int pg_check_failures;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
            pg_check_failures++;                                                                   \
        }                                                                                          \
    } while (0)

/* Expect a call to return status s; print the runtime's message otherwise. */
#define CHECK_STATUS(call, s)                                                                      \
    do {                                                                                           \
        pg_status check_st_ = (call);                                                              \
        if (check_st_ != (s)) {                                                                    \
            fprintf(stderr, "%s:%d: %s returned %s, expected %s: %s\n", __FILE__, __LINE__, #call, \
                    pg_status_name(check_st_), pg_status_name(s), pg_last_error());                \
            pg_check_failures++;                                                                   \
        }                                                                                          \
    } while (0)

#define CHECK_OK(call) CHECK_STATUS(call, PG_OK)

/* Fatal variant: stop the test when later steps make no sense without this one. */
#define REQUIRE_OK(call)                                                                           \
    do {                                                                                           \
        pg_status check_st_ = (call);                                                              \
        if (check_st_ != PG_OK) {                                                                  \
            fprintf(stderr, "%s:%d: %s returned %s: %s\n", __FILE__, __LINE__, #call,              \
                    pg_status_name(check_st_), pg_last_error());                                   \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define CHECK_DONE()                                                                               \
    do {                                                                                           \
        if (pg_check_failures) {                                                                   \
            fprintf(stderr, "%d check(s) failed\n", pg_check_failures);                            \
            return 1;                                                                              \
        }                                                                                          \
        return 0;                                                                                  \
    } while (0)

/* call returns status and the last message contains needle. */
#define CHECK_MSG(call, status, needle)                                                            \
    do {                                                                                           \
        CHECK_STATUS(call, status);                                                                \
        if (!strstr(pg_last_error(), needle)) {                                                    \
            fprintf(stderr, "%s:%d: message '%s' lacks '%s'\n", __FILE__, __LINE__,                \
                    pg_last_error(), needle);                                                      \
            pg_check_failures++;                                                                   \
        }                                                                                          \
    } while (0)

#endif
