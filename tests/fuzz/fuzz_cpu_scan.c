/* fuzz_cpu_scan.c: fuzz harness of what scans kernel source before the host compiler runs on it
 * for CPU devices, in the order pg__cpu_compile calls it: unsupported constructs, the kernel's
 * presence, whether it needs cooperative blocks, the extern __shared__ rewrite; and the
 * top-level units those rest on. Input: the kernel name on the first line, the source after. */
#include "nvrtc/cpu_features.h"
#include "nvrtc/cpu_rewrite.h"
#include "nvrtc/cpu_source.h"
#include "nvrtc/signature.h"
#include "tests/fuzz/fuzz.h"

/* Units are in order, inside the text, and do not overlap; a body lies inside its unit. */
static void check_units(const char *source) {
    char *code = pg__signature_strip(source, 1);
    if (!code)
        return;
    pg__cpu_unit *u = NULL;
    int n = pg__cpu_units(code, &u);
    size_t len = strlen(code), last = 0;
    for (int i = 0; i < n; i++) {
        FUZZ_ASSERT(u[i].start >= last && u[i].start <= u[i].body);
        FUZZ_ASSERT(u[i].body <= u[i].end && u[i].end <= len);
        last = u[i].end;
    }
    free(u);
    free(code);
}

int pg_fuzz_cpu_scan(const uint8_t *data, size_t size) {
    char *buf;
    const char *name, *source;
    if (pg_fuzz_split(data, size, &buf, &name, &source))
        return 0;
    check_units(source);
    pg_status st = pg__cpu_check_constructs(source, name);
    if (st)
        pg_fuzz_check_error(st);
    st = pg__signature_find(source, name);
    if (st)
        pg_fuzz_check_error(st);
    int blocks = pg__cpu_needs_block(source, name, NULL);
    FUZZ_ASSERT(blocks >= -1 && blocks <= 1);
    char *out = NULL;
    st = pg__cpu_rewrite_shared(source, name, &out);
    if (st == PG_OK) {
        FUZZ_ASSERT(out != NULL);
        /* Nothing to rewrite: the text is the source itself. */
        if (!strstr(source, "__shared__"))
            FUZZ_ASSERT(strcmp(out, source) == 0);
        free(out);
    } else {
        pg_fuzz_check_error(st);
    }
    free(buf);
    return 0;
}
