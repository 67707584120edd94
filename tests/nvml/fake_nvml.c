/* fake_nvml.c: a stand-in libnvidia-ml.so.1 for tests/nvml/test_nvml.c, answering the calls
 * devices/cuda/cu_nvml.c makes with scripted figures. Two GPUs: "GPU-11111111-..." found by
 * UUID, and one found only by PCI bus id 0000:65:00.0 that cannot report its power (as some
 * boards cannot). Energy grows by 1500 mJ at each read. Setting FAKE_NVML_FAIL_INIT makes
 * nvmlInit fail. */
#include <stdlib.h>
#include <string.h>

typedef struct gpu {
    int id;
} gpu;

static gpu g0 = {0}, g1 = {1};
static int started;
static unsigned long long energy[2] = {5000000, 70000};

enum { OK = 0, UNINITIALIZED = 1, INVALID_ARGUMENT = 2, NOT_SUPPORTED = 3, NOT_FOUND = 6 };

int nvmlInit_v2(void) {
    if (getenv("FAKE_NVML_FAIL_INIT"))
        return 9; /* NVML_ERROR_DRIVER_NOT_LOADED */
    started = 1;
    return OK;
}

const char *nvmlErrorString(int r) {
    return r == NOT_FOUND       ? "Not Found"
           : r == NOT_SUPPORTED ? "Not Supported"
           : r == 9             ? "Driver Not Loaded"
                                : "Unknown Error";
}

int nvmlDeviceGetHandleByUUID(const char *uuid, gpu **d) {
    if (!started)
        return UNINITIALIZED;
    if (!strcmp(uuid, "GPU-11111111-2222-3333-4444-555555555555")) {
        *d = &g0;
        return OK;
    }
    return NOT_FOUND;
}

int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, gpu **d) {
    if (!started)
        return UNINITIALIZED;
    if (!strcmp(bus, "0000:65:00.0")) {
        *d = &g1;
        return OK;
    }
    return NOT_FOUND;
}

int nvmlDeviceGetPowerUsage(gpu *d, unsigned *mw) {
    if (d->id == 1)
        return NOT_SUPPORTED;
    *mw = 312500;
    return OK;
}

int nvmlDeviceGetTotalEnergyConsumption(gpu *d, unsigned long long *mj) {
    energy[d->id] += 1500;
    *mj = energy[d->id];
    return OK;
}

int nvmlDeviceGetPowerManagementDefaultLimit(gpu *d, unsigned *mw) {
    *mw = d->id ? 300000 : 700000;
    return OK;
}
