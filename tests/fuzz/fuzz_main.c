/* fuzz_main.c: the driver around one harness (PG_FUZZ_ENTRY names it): AFL++'s persistent loop
 * when built by afl-clang-fast, libFuzzer's entry point with PG_FUZZ_LIBFUZZER, otherwise a
 * runner of the files named on the command line (or stdin), for reproducing a finding. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int PG_FUZZ_ENTRY(const uint8_t *data, size_t size);

#if defined(PG_FUZZ_LIBFUZZER)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return PG_FUZZ_ENTRY(data, size);
}

#elif defined(__AFL_FUZZ_TESTCASE_LEN)

__AFL_FUZZ_INIT();

int main(void) {
    __AFL_INIT();
    const uint8_t *buf = __AFL_FUZZ_TESTCASE_BUF;
    while (__AFL_LOOP(10000))
        PG_FUZZ_ENTRY(buf, (size_t)__AFL_FUZZ_TESTCASE_LEN);
    return 0;
}

#else

static int run_file(FILE *f) {
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            uint8_t *nb = realloc(buf, cap *= 2);
            if (!nb)
                free(buf);
            buf = nb;
        }
    }
    if (!buf)
        return 1;
    PG_FUZZ_ENTRY(buf, n);
    free(buf);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2)
        return run_file(stdin);
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            perror(argv[i]);
            return 1;
        }
        int r = run_file(f);
        fclose(f);
        if (r)
            return r;
    }
    return 0;
}

#endif
