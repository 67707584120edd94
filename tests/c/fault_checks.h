/* fault_checks.h: what the kernel-fault tests (CPU devices, GPUs) share: a policy that places
 * each launch where the test says, and reads that must give a value or fail naming the fault. */
#ifndef PG_TEST_FAULT_CHECKS_H
#define PG_TEST_FAULT_CHECKS_H

#include "polygpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Test placement: every launch goes to device `want` when it may, else the first candidate. */
static int want;

static int pick_device(void *state, const pg_policy_view *v) {
    (void)state;
    if (v->candidates >> want & 1)
        return want;
    for (int d = 0; d < v->ndevices; d++)
        if (v->candidates >> d & 1)
            return d;
    return -1;
}

static uint64_t array_id(pg_array *a) {
    pg_array_desc d;
    return pg_array_describe(a, &d) == PG_OK ? d.id : 0;
}

/* The n float32 elements of a all hold v. */
static int holds_n(pg_array *a, uint64_t n, float v) {
    float *buf = malloc(n * sizeof *buf);
    pg_status st = buf ? pg_array_read(a, 0, n, buf) : PG_ERROR_OUT_OF_MEMORY;
    int ok = st == PG_OK;
    if (!ok)
        fprintf(stderr, "reading array %llu: %s: %s\n", (unsigned long long)array_id(a),
                pg_status_name(st), pg_last_error());
    for (uint64_t i = 0; ok && i < n; i++)
        if (buf[i] != v) {
            fprintf(stderr, "array %llu: element %llu is %g, expected %g\n",
                    (unsigned long long)array_id(a), (unsigned long long)i, buf[i], v);
            ok = 0;
        }
    free(buf);
    return ok;
}

/* Reading a (n float32 elements) fails with PG_ERROR_DEVICE and a message containing each of
 * the strings given (NULL: none). */
static int read_fails_n(pg_array *a, uint64_t n, const char *s1, const char *s2, const char *s3) {
    float *buf = malloc(n * sizeof *buf);
    pg_status st = buf ? pg_array_read(a, 0, n, buf) : PG_ERROR_OUT_OF_MEMORY;
    free(buf);
    char m[2048];
    snprintf(m, sizeof m, "%s", pg_last_error());
    const char *need[] = {s1, s2, s3};
    int ok = st == PG_ERROR_DEVICE;
    for (int i = 0; i < 3; i++)
        if (need[i] && !strstr(m, need[i]))
            ok = 0;
    if (!ok)
        fprintf(stderr,
                "reading array %llu: %s '%s'; expected PG_ERROR_DEVICE with '%s' '%s' '%s'\n",
                (unsigned long long)array_id(a), pg_status_name(st), m, s1 ? s1 : "", s2 ? s2 : "",
                s3 ? s3 : "");
    return ok;
}

#endif
