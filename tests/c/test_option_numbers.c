/* test_option_numbers.c: a numeric option given explicitly is checked, never taken as "unset":
 * NaN, negative or out-of-range exploration thresholds are errors naming the option and value,
 * by name (pg_options_set, as every binding passes options), in the struct and from the
 * environment. */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check_message(const char *needle, int line) {
    if (!strstr(pg_last_error(), needle)) {
        fprintf(stderr, "%s:%d: message '%s' lacks '%s'\n", __FILE__, line, pg_last_error(),
                needle);
        pg_check_failures++;
    }
}

/* pg_options_set rejects the value at once, naming it and the range. */
static void rejected_by_name(const char *value, int line) {
    pg_options o;
    pg_options_init(&o);
    pg_status st = pg_options_set(&o, "exploration_threshold", value);
    if (st != PG_ERROR_ARGUMENT) {
        fprintf(stderr, "%s:%d: exploration_threshold '%s' gave %s, expected an argument error\n",
                __FILE__, line, value, pg_status_name(st));
        pg_check_failures++;
        return;
    }
    check_message("exploration_threshold", line);
    check_message(value, line);
    check_message("[0, 1]", line);
}

/* The value is accepted and the runtime uses it. */
static void accepted_by_name(const char *value, int line) {
    pg_options o;
    pg_options_init(&o);
    o.devices = "host:1";
    pg_runtime *rt = NULL;
    if (pg_options_set(&o, "exploration_threshold", value) != PG_OK ||
        pg_runtime_new(&o, &rt) != PG_OK) {
        fprintf(stderr, "%s:%d: exploration_threshold '%s' refused: %s\n", __FILE__, line, value,
                pg_last_error());
        pg_check_failures++;
        return;
    }
    CHECK_OK(pg_runtime_free(rt));
}

int main(void) {
    rejected_by_name("nan", __LINE__);
    rejected_by_name("NaN", __LINE__);
    rejected_by_name("-0.5", __LINE__);
    rejected_by_name("-1", __LINE__);
    rejected_by_name("1.5", __LINE__);
    rejected_by_name("inf", __LINE__);
    rejected_by_name("-inf", __LINE__);
    accepted_by_name("0", __LINE__);
    accepted_by_name("1", __LINE__);
    accepted_by_name("0.25", __LINE__);

    /* In the struct a negative number still means "unset", but NaN is no number at all. */
    pg_options o;
    pg_options_init(&o);
    o.devices = "host:1";
    o.exploration_threshold = NAN;
    pg_runtime *rt = NULL;
    CHECK_STATUS(pg_runtime_new(&o, &rt), PG_ERROR_ARGUMENT);
    check_message("exploration_threshold", __LINE__);
    o.exploration_threshold = -1.0;
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    CHECK_OK(pg_runtime_free(rt));

    /* From the environment: the same checks. */
    pg_options_init(&o);
    o.devices = "host:1";
    setenv("PG_EXPLORATION_THRESHOLD", "nan", 1);
    CHECK_STATUS(pg_runtime_new(&o, &rt), PG_ERROR_ARGUMENT);
    check_message("exploration_threshold", __LINE__);
    setenv("PG_EXPLORATION_THRESHOLD", "-0.5", 1);
    CHECK_STATUS(pg_runtime_new(&o, &rt), PG_ERROR_ARGUMENT);
    check_message("-0.5", __LINE__);
    unsetenv("PG_EXPLORATION_THRESHOLD");
    CHECK_DONE();
}
