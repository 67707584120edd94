/* kernel_file.h: the text of a kernel of the corpus in tests/kernels, for the C tests. */
#ifndef PG_TEST_KERNEL_FILE_H
#define PG_TEST_KERNEL_FILE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* tests/kernels/<file>, malloc'ed and NUL-terminated; exits the test when it cannot be read.
 * The tree comes from PG_SOURCE_DIR (CTest sets it), else from this header's location. */
static inline char *read_kernel(const char *file) {
    char path[4096];
    const char *root = getenv("PG_SOURCE_DIR");
    if (root && *root) {
        snprintf(path, sizeof path, "%s/tests/kernels/%s", root, file);
    } else { /* run by hand: next to this file */
        const char *slash = strrchr(__FILE__, '/');
        int dir = slash ? (int)(slash - __FILE__) : 0;
        snprintf(path, sizeof path, "%.*s%s../kernels/%s", dir, __FILE__, dir ? "/" : "", file);
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s (set PG_SOURCE_DIR to the source tree)\n", path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (!s || fread(s, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(1);
    }
    s[n] = '\0';
    fclose(f);
    return s;
}

#endif
