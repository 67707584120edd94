/* test_nvml.c: the NVML loader against tests/nvml/fake_nvml.c (see CMakeLists.txt): GPUs
 * found by UUID or PCI bus id, the figures read, "unknown" where NVML cannot say, and an NVML
 * that does not start. Argument "init-fails": FAKE_NVML_FAIL_INIT is set. */
#include "tests/c/check.h"
#include "devices/cuda/cu_nvml.h"

static void works(void) {
    char why[512] = "";
    pg__nvml_gpu *a =
        pg__nvml_find("GPU-11111111-2222-3333-4444-555555555555", "", why, sizeof why);
    CHECK(a != NULL);
    /* a MIG-like UUID NVML does not take: the PCI bus id finds the board */
    pg__nvml_gpu *b = pg__nvml_find("MIG-0000", "0000:65:00.0", why, sizeof why);
    CHECK(b != NULL && b != a);
    unsigned mw = 0;
    CHECK(pg__nvml_power_mw(a, &mw) && mw == 312500);
    CHECK(!pg__nvml_power_mw(b, &mw)); /* not supported there: unknown */
    CHECK(pg__nvml_default_limit_mw(a, &mw) && mw == 700000);
    CHECK(pg__nvml_default_limit_mw(b, &mw) && mw == 300000);
    uint64_t e0 = 0, e1 = 0;
    CHECK(pg__nvml_energy_mj(a, &e0) && pg__nvml_energy_mj(a, &e1) && e1 == e0 + 1500);
    /* neither known: NULL, and why names both */
    CHECK(pg__nvml_find("GPU-99", "0000:01:00.0", why, sizeof why) == NULL);
    CHECK(strstr(why, "GPU-99") && strstr(why, "0000:01:00.0") && strstr(why, "Not Found"));
    CHECK(pg__nvml_find(NULL, NULL, NULL, 0) == NULL);
    /* nothing to read from no GPU */
    CHECK(!pg__nvml_power_mw(NULL, &mw) && !pg__nvml_energy_mj(NULL, &e0));
}

static void init_fails(void) {
    char why[512] = "";
    CHECK(pg__nvml_find("GPU-11111111-2222-3333-4444-555555555555", "0000:65:00.0", why,
                        sizeof why) == NULL);
    CHECK(strstr(why, "nvmlInit") && strstr(why, "Driver Not Loaded"));
    CHECK(strstr(why, "unknown") != NULL); /* it says what that costs */
    /* asked again: the same answer, no second attempt */
    why[0] = 0;
    CHECK(pg__nvml_find("GPU-11111111-2222-3333-4444-555555555555", "", why, sizeof why) == NULL);
    CHECK(strstr(why, "nvmlInit") != NULL);
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "init-fails"))
        init_fails();
    else
        works();
    CHECK_DONE();
}
