/* fuzz_signature_infer.c: fuzz harness of kernels found in source: stripping, lookup by name
 * (pg__signature_find) and parameter lists inferred with template arguments substituted
 * (pg__signature_infer). Input: the kernel name on the first line, the source after it. */
#include "nvrtc/signature.h"
#include "tests/fuzz/fuzz.h"

/* pg__signature_strip keeps the length and every newline where it was. */
static void check_strip(const char *source, int blank_preprocessor) {
    char *s = pg__signature_strip(source, blank_preprocessor);
    if (!s)
        return;
    size_t n = strlen(source);
    FUZZ_ASSERT(strlen(s) == n);
    for (size_t i = 0; i < n; i++)
        FUZZ_ASSERT((source[i] == '\n') == (s[i] == '\n'));
    free(s);
}

int pg_fuzz_signature_infer(const uint8_t *data, size_t size) {
    char *buf;
    const char *name, *source;
    if (pg_fuzz_split(data, size, &buf, &name, &source))
        return 0;
    check_strip(source, 0);
    check_strip(source, 1);
    pg_status found = pg__signature_find(source, name);
    if (found)
        pg_fuzz_check_error(found);
    pg_param_info *p = NULL;
    int n = -1;
    pg_status st = pg__signature_infer(source, name, &p, &n);
    if (st == PG_OK) {
        pg_fuzz_check_params(p, n);
        free(p);
        FUZZ_ASSERT(found == PG_OK); /* a kernel whose parameters were read exists */
    } else {
        pg_fuzz_check_error(st);
        FUZZ_ASSERT(found == PG_OK || st == found);
    }
    free(buf);
    return 0;
}
