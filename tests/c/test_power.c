/* test_power.c: power and energy per device on CPU devices with injected figures (option
 * power_watts): pg__power_device_watts through either runtime pointer, the option's syntax
 * and range errors. */
#include "check.h"
#include "core/power.h"

static pg_status make(const char *devices, const char *watts, pg_runtime **rt) {
    pg_options o;
    pg_options_init(&o);
    pg_options_set(&o, "devices", devices);
    if (watts)
        pg_options_set(&o, "power_watts", watts);
    return pg_runtime_new(&o, rt);
}

static void watts_injected(void) {
    pg_runtime *rt;
    REQUIRE_OK(make("host:4", "0:120,1:80,3:40.5", &rt));
    CHECK(pg__power_device_watts(rt, 0) == 120);
    CHECK(pg__power_device_watts(rt, 1) == 80);
    CHECK(pg__power_device_watts(rt, 2) == 0); /* unknown */
    CHECK(pg__power_device_watts(rt, 3) == 40.5);
    CHECK(pg__power_device_watts(rt, 4) == 0); /* no such device */
    CHECK(pg__power_device_watts(rt, -1) == 0);
    /* the internal pointer, as core calls it with the lock held */
    pg__runtime *in = pg__enter_runtime(rt, "test");
    REQUIRE_OK(in ? PG_OK : PG_ERROR_STATE);
    CHECK(pg__power_device_watts(in, 1) == 80);
    pg__leave(in);
    CHECK_OK(pg_runtime_free(rt));

    REQUIRE_OK(make("host:3", "95", &rt));
    for (int d = 0; d < 3; d++)
        CHECK(pg__power_device_watts(rt, d) == 95);
    CHECK_OK(pg_runtime_free(rt));

    REQUIRE_OK(make("host:2", NULL, &rt));
    CHECK(pg__power_device_watts(rt, 0) == 0);
    CHECK_OK(pg_runtime_free(rt));
}

static void watts_errors(void) {
    pg_options o;
    pg_options_init(&o);
    CHECK_STATUS(pg_options_set(&o, "power_limit", "-3"), PG_ERROR_ARGUMENT);
    CHECK_STATUS(pg_options_set(&o, "power_limit", "lots"), PG_ERROR_ARGUMENT);
    CHECK(strstr(pg_last_error(), "power_limit") != NULL);
    pg_runtime *rt = NULL;
    const char *bad[] = {"0:120,", "x", "0:-5", "0:", "1:80,1", "-1:50", "0:1e999", "0;120"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK_STATUS(make("host:2", bad[i], &rt), PG_ERROR_ARGUMENT);
        CHECK(strstr(pg_last_error(), "power_watts") != NULL);
    }
    CHECK_STATUS(make("host:2", "0:10,2:30", &rt), PG_ERROR_ARGUMENT);
    CHECK(strstr(pg_last_error(), "names device 2") != NULL);
    /* the runtime is still usable after all that */
    REQUIRE_OK(make("host:2", "0:10,1:30", &rt));
    CHECK(pg__power_device_watts(rt, 1) == 30);
    CHECK_OK(pg_runtime_free(rt));
}

int main(void) {
    watts_injected();
    watts_errors();
    CHECK_DONE();
}
