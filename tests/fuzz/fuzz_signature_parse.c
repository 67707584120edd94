/* fuzz_signature_parse.c: fuzz harness of explicit signatures (pg__signature_parse) and of
 * parameter lists as kernel source gives them (pg__signature_parse_list). Input: the text. */
#include "nvrtc/signature.h"
#include "tests/fuzz/fuzz.h"

int pg_fuzz_signature_parse(const uint8_t *data, size_t size) {
    char *sig = malloc(size + 1);
    if (!sig)
        return 0;
    memcpy(sig, data, size);
    sig[size] = '\0';
    pg_param_info *p = NULL;
    int n = -1;
    pg_status st = pg__signature_parse(sig, &p, &n);
    if (st == PG_OK) {
        pg_fuzz_check_params(p, n);
        free(p);
    } else {
        pg_fuzz_check_error(st);
    }
    /* The same text as a parameter list from source: no in/out prefixes, and not necessarily
     * NUL-terminated at len (a list is a slice of the whole source). */
    size_t len = strlen(sig);
    char *slice = malloc(len + 1);
    if (slice) {
        memcpy(slice, sig, len);
        slice[len] = ')';
        p = NULL;
        st = pg__signature_parse_list("kernel 'k'", slice, len, &p, &n);
        if (st == PG_OK) {
            pg_fuzz_check_params(p, n);
            free(p);
        } else {
            pg_fuzz_check_error(st);
        }
        free(slice);
    }
    free(sig);
    return 0;
}
