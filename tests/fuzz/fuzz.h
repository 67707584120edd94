/* fuzz.h: what the fuzz harnesses share: the input split into a kernel name and a source, and
 * the invariant check that turns a broken promise into a crash the fuzzer records. */
#ifndef PG_FUZZ_H
#define PG_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A broken promise of the code under test is a finding like a crash: abort so it is saved. */
#define FUZZ_ASSERT(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, #cond);      \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* The input as C strings: the first line is the kernel name, the rest the source; both end at
 * the first NUL byte (the API takes C strings). *buf is malloc'ed: free it. 0, or -1 when out
 * of memory. With no newline the whole input is the source and the name is "k". */
static inline int pg_fuzz_split(const uint8_t *data, size_t size, char **buf, const char **name,
                                const char **source) {
    char *b = malloc(size + 3);
    if (!b)
        return -1;
    memcpy(b, data, size);
    b[size] = '\0';
    char *nl = memchr(b, '\n', strlen(b));
    if (nl) {
        *nl = '\0';
        *name = b;
        *source = nl + 1;
    } else {
        memmove(b + 2, b, strlen(b) + 1);
        b[0] = 'k';
        b[1] = '\0';
        *name = b;
        *source = b + 2;
    }
    *buf = b;
    return 0;
}

/* A parameter list that was accepted is well formed. */
static inline void pg_fuzz_check_params(const pg_param_info *p, int n) {
    FUZZ_ASSERT(n >= 0 && n < 1 << 20);
    FUZZ_ASSERT(p != NULL);
    for (int i = 0; i < n; i++) {
        FUZZ_ASSERT(memchr(p[i].name, '\0', sizeof p[i].name) != NULL);
        FUZZ_ASSERT(memchr(p[i].type, '\0', sizeof p[i].type) != NULL && p[i].type[0]);
        FUZZ_ASSERT((unsigned)p[i].dtype < PG_DTYPE_COUNT);
        FUZZ_ASSERT(p[i].is_array == 0 || p[i].is_array == 1);
        FUZZ_ASSERT(p[i].access >= PG_ACCESS_IN && p[i].access <= PG_ACCESS_INOUT);
        FUZZ_ASSERT(p[i].is_array || p[i].access == PG_ACCESS_IN);
    }
}

/* A refused input got a message that says why. */
static inline void pg_fuzz_check_error(pg_status st) {
    FUZZ_ASSERT(st != PG_OK);
    FUZZ_ASSERT(pg_last_error()[0] != '\0');
}

#endif
