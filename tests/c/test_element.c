/* test_element.c: pg_element_store/pg_element_load, the one element conversion and range check
 * that every binding and kernel scalars use: bounds of every dtype, exactness, the messages
 * (word for word as the Python and Lua suites expect), and a refused value writes nothing. */
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Store must fail with PG_ERROR_ARGUMENT, say `msg` and leave dst as it was. */
static void refused(pg_dtype t, pg_arg v, const char *msg, int line) {
    unsigned char dst[8], before[8];
    memset(dst, 0xA5, sizeof dst);
    memcpy(before, dst, sizeof dst);
    pg_status st = pg_element_store(t, v, dst);
    if (st != PG_ERROR_ARGUMENT || !strstr(pg_last_error(), msg)) {
        fprintf(stderr, "line %d: a value into %s: got %s \"%s\", want \"%s\"\n", line,
                pg_dtype_name(t), pg_status_name(st), pg_last_error(), msg);
        pg_check_failures++;
    }
    CHECK(memcmp(dst, before, sizeof dst) == 0);
}
#define REFUSED(t, v, msg) refused(t, v, msg, __LINE__)

/* Store v into t, then load it back: the load's widest value. */
static pg_arg round_trip(pg_dtype t, pg_arg v) {
    unsigned char dst[8] = {0};
    pg_arg back = pg_arg_int(-12345);
    CHECK_OK(pg_element_store(t, v, dst));
    CHECK_OK(pg_element_load(t, dst, &back));
    return back;
}

static void integer_bounds(void) {
    static const struct {
        pg_dtype t;
        int64_t lo;
        uint64_t hi;
        const char *range;
    } ints[] = {
        {PG_INT8, INT8_MIN, INT8_MAX, "(out of range -128 to 127)"},
        {PG_INT16, INT16_MIN, INT16_MAX, "(out of range -32768 to 32767)"},
        {PG_INT32, INT32_MIN, INT32_MAX, "(out of range -2147483648 to 2147483647)"},
        {PG_INT64, INT64_MIN, INT64_MAX,
         "(out of range -9223372036854775808 to 9223372036854775807)"},
        {PG_UINT8, 0, UINT8_MAX, "(out of range 0 to 255)"},
        {PG_UINT16, 0, UINT16_MAX, "(out of range 0 to 65535)"},
        {PG_UINT32, 0, UINT32_MAX, "(out of range 0 to 4294967295)"},
        {PG_UINT64, 0, UINT64_MAX, "(out of range 0 to 18446744073709551615)"},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        pg_dtype t = ints[i].t;
        int is_unsigned = t >= PG_UINT8;
        /* Both ends, given as int64, uint64 and (where exact) as an integral double. */
        pg_arg lo = round_trip(t, pg_arg_int(ints[i].lo));
        CHECK(lo.kind == PG_ARG_SCALAR);
        CHECK(is_unsigned ? lo.dtype == PG_UINT64 && lo.v.u == 0
                          : lo.dtype == PG_INT64 && lo.v.i == ints[i].lo);
        pg_arg hi = round_trip(t, pg_arg_uint(ints[i].hi));
        CHECK(is_unsigned ? hi.v.u == ints[i].hi : (uint64_t)hi.v.i == ints[i].hi);
        if (pg_dtype_size(t) < 8) {
            pg_arg d = round_trip(t, pg_arg_double((double)ints[i].hi));
            CHECK(is_unsigned ? d.v.u == ints[i].hi : (uint64_t)d.v.i == ints[i].hi);
        }
        /* One past each end, in each kind of value; the message names value, dtype and range. */
        char msg[160];
        if (ints[i].hi < UINT64_MAX) {
            snprintf(msg, sizeof msg, "value %llu does not fit %s %s",
                     (unsigned long long)ints[i].hi + 1, pg_dtype_name(t), ints[i].range);
            REFUSED(t, pg_arg_uint(ints[i].hi + 1), msg);
        }
        if (ints[i].lo > INT64_MIN) {
            snprintf(msg, sizeof msg, "value %lld does not fit %s %s", (long long)ints[i].lo - 1,
                     pg_dtype_name(t), ints[i].range);
            REFUSED(t, pg_arg_int(ints[i].lo - 1), msg);
        }
        snprintf(msg, sizeof msg, "does not fit %s %s", pg_dtype_name(t), ints[i].range);
        REFUSED(t, pg_arg_double(ldexp(1.0, 8 * (int)pg_dtype_size(t))), msg);
        REFUSED(t, pg_arg_double(-INFINITY), msg);
        /* Floating-point values must be integral: no silent rounding. */
        snprintf(msg, sizeof msg, "value 0.5 has no exact %s representation", pg_dtype_name(t));
        REFUSED(t, pg_arg_double(0.5), msg);
        REFUSED(t, pg_arg_float(2.5f), "value 2.5 has no exact");
        REFUSED(t, pg_arg_double(NAN), "value nan has no exact");
    }
    /* The 64-bit ends as doubles: 2^63 is past int64 but fits uint64; 2^64 fits neither. */
    pg_arg u = round_trip(PG_UINT64, pg_arg_double(9223372036854775808.0));
    CHECK(u.dtype == PG_UINT64 && u.v.u == UINT64_C(9223372036854775808));
    REFUSED(PG_INT64, pg_arg_double(9223372036854775808.0),
            "value 9.223372036854776e+18 does not fit int64");
    REFUSED(PG_UINT64, pg_arg_double(18446744073709551616.0),
            "value 1.8446744073709552e+19 does not fit uint64");
    pg_arg m = round_trip(PG_INT64, pg_arg_double(-9223372036854775808.0));
    CHECK(m.v.i == INT64_MIN);
    pg_arg z = round_trip(PG_UINT8, pg_arg_double(-0.0)); /* -0.0 is zero */
    CHECK(z.v.u == 0);
    /* As the Python and Lua suites spell them. */
    REFUSED(PG_UINT8, pg_arg_int(300), "value 300 does not fit uint8 (out of range 0 to 255)");
    REFUSED(PG_INT64, pg_arg_uint(UINT64_C(9223372036854775808)),
            "value 9223372036854775808 does not fit int64 (out of range -9223372036854775808 to "
            "9223372036854775807)");
}

static void floating_point(void) {
    const char *f32 = "does not fit in float32 (out of range -3.4028235e+38 to 3.4028235e+38)";
    REFUSED(PG_FLOAT32, pg_arg_double(1e39), "value 1e+39 does not fit in float32 (out of range");
    REFUSED(PG_FLOAT32, pg_arg_double(-1e39), f32);
    REFUSED(PG_FLOAT32, pg_arg_double(3.5e38), f32);
    /* The largest float, infinities and NaN fit; values round to nearest. */
    pg_arg big = round_trip(PG_FLOAT32, pg_arg_double(3.4028234663852886e38));
    CHECK(big.dtype == PG_FLOAT64 && big.v.f == 3.4028234663852886e38);
    CHECK(round_trip(PG_FLOAT32, pg_arg_double(INFINITY)).v.f == INFINITY);
    CHECK(isnan(round_trip(PG_FLOAT32, pg_arg_double(NAN)).v.f));
    CHECK(round_trip(PG_FLOAT32, pg_arg_double(0.1)).v.f == (double)0.1f);
    CHECK(round_trip(PG_FLOAT64, pg_arg_double(0.1)).v.f == 0.1);
    CHECK(round_trip(PG_FLOAT64, pg_arg_double(1e300)).v.f == 1e300);
    /* Integers of any size go to either floating type, rounded. */
    CHECK(round_trip(PG_FLOAT32, pg_arg_int(-3)).v.f == -3.0);
    CHECK(round_trip(PG_FLOAT64, pg_arg_uint(UINT64_MAX)).v.f == 18446744073709551616.0);
    CHECK(round_trip(PG_FLOAT32, pg_arg_uint(UINT64_MAX)).v.f == 18446744073709551616.0);
}

/* Load reads packed (unaligned) elements and widens them exactly. */
static void loads(void) {
    unsigned char buf[9];
    pg_arg v;
    int16_t s = -2;
    memcpy(buf + 1, &s, sizeof s);
    CHECK_OK(pg_element_load(PG_INT16, buf + 1, &v));
    CHECK(v.kind == PG_ARG_SCALAR && v.dtype == PG_INT64 && v.v.i == -2);
    CHECK_OK(pg_element_load(PG_UINT16, buf + 1, &v));
    CHECK(v.dtype == PG_UINT64 && v.v.u == 65534);
    uint64_t u = UINT64_MAX;
    memcpy(buf + 1, &u, sizeof u);
    CHECK_OK(pg_element_load(PG_UINT64, buf + 1, &v));
    CHECK(v.dtype == PG_UINT64 && v.v.u == UINT64_MAX);
    float f = -1.5f;
    memcpy(buf + 1, &f, sizeof f);
    CHECK_OK(pg_element_load(PG_FLOAT32, buf + 1, &v));
    CHECK(v.dtype == PG_FLOAT64 && v.v.f == -1.5);
    /* A store writes only its element's bytes. */
    memset(buf, 0xA5, sizeof buf);
    CHECK_OK(pg_element_store(PG_INT16, pg_arg_int(-1), buf + 1));
    CHECK(buf[0] == 0xA5 && buf[1] == 0xFF && buf[2] == 0xFF && buf[3] == 0xA5);
}

static void bad_calls(void) {
    unsigned char dst[8] = {0};
    pg_arg v;
    CHECK_STATUS(pg_element_store(PG_DTYPE_COUNT, pg_arg_int(1), dst), PG_ERROR_ARGUMENT);
    CHECK(strstr(pg_last_error(), "dtype"));
    CHECK_STATUS(pg_element_store(PG_INT8, pg_arg_int(1), NULL), PG_ERROR_ARGUMENT);
    CHECK_STATUS(pg_element_store(PG_INT8, pg_arg_array(NULL), dst), PG_ERROR_ARGUMENT);
    CHECK(strstr(pg_last_error(), "scalar"));
    pg_arg odd = pg_arg_int(1);
    odd.dtype = (pg_dtype)99;
    CHECK_STATUS(pg_element_store(PG_INT8, odd, dst), PG_ERROR_ARGUMENT);
    CHECK_STATUS(pg_element_load((pg_dtype)-1, dst, &v), PG_ERROR_ARGUMENT);
    CHECK_STATUS(pg_element_load(PG_INT8, NULL, &v), PG_ERROR_ARGUMENT);
    CHECK_STATUS(pg_element_load(PG_INT8, dst, NULL), PG_ERROR_ARGUMENT);
}

/* A whole buffer at once, as the bindings' casts do. */
static void convert(void) {
    double d[4] = {1.5, -2.0, 3.25, 1e300};
    float f[4] = {0};
    CHECK_OK(pg_elements_convert(PG_FLOAT64, d, PG_FLOAT32, f, 3, 0));
    CHECK(f[0] == 1.5f && f[1] == -2.0f && f[2] == 3.25f);
    CHECK_STATUS(pg_elements_convert(PG_FLOAT64, d, PG_FLOAT32, f, 4, 0), PG_ERROR_ARGUMENT);
    CHECK(strstr(pg_last_error(), "element 3") && strstr(pg_last_error(), "float32"));
    int32_t i[3] = {0};
    CHECK_STATUS(pg_elements_convert(PG_FLOAT64, d, PG_INT32, i, 3, 0), PG_ERROR_ARGUMENT);
    CHECK(strstr(pg_last_error(), "element 0") && strstr(pg_last_error(), "1.5"));
    CHECK_OK(pg_elements_convert(PG_FLOAT64, d, PG_INT32, i, 3, 1)); /* truncated: C's cast */
    CHECK(i[0] == 1 && i[1] == -2 && i[2] == 3);
    int64_t big[3] = {1, 255, 256};
    uint8_t u[3] = {9, 9, 9};
    CHECK_STATUS(pg_elements_convert(PG_INT64, big, PG_UINT8, u, 3, 0), PG_ERROR_ARGUMENT);
    CHECK(strstr(pg_last_error(), "element 2") && strstr(pg_last_error(), "256"));
    CHECK(u[0] == 1 && u[1] == 255 && u[2] == 9); /* the elements before it, nothing after */
    int64_t same[2] = {0};
    CHECK_OK(pg_elements_convert(PG_INT64, big, PG_INT64, same, 2, 0));
    CHECK(same[0] == 1 && same[1] == 255);
    CHECK_STATUS(pg_elements_convert((pg_dtype)99, d, PG_INT32, i, 1, 0), PG_ERROR_ARGUMENT);
    CHECK_OK(pg_elements_convert(PG_INT32, NULL, PG_INT64, NULL, 0, 0)); /* nothing to do */
}

int main(void) {
    convert();
    integer_bounds();
    floating_point();
    loads();
    bad_calls();
    CHECK_DONE();
}
