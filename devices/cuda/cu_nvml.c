/* cu_nvml.c: loads NVML (libnvidia-ml.so.1) with dlopen and reads power, energy and the default
 * power limit of the GPUs the CUDA backend opened. */
#include "devices/cuda/cu_nvml.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

typedef int nvmlReturn_t; /* NVML_SUCCESS = 0 */
typedef struct pg__nvml_gpu *nvmlDevice_t;

/* X(name, symbol, parameter list) for every entry point read. */
#define PG__NVML_FUNCS(X)                                                                          \
    X(nvmlInit, "nvmlInit_v2", (void))                                                             \
    X(nvmlDeviceGetHandleByUUID, "nvmlDeviceGetHandleByUUID", (const char *uuid, nvmlDevice_t *d)) \
    X(nvmlDeviceGetHandleByPciBusId, "nvmlDeviceGetHandleByPciBusId_v2",                           \
      (const char *bus, nvmlDevice_t *d))                                                          \
    X(nvmlDeviceGetPowerUsage, "nvmlDeviceGetPowerUsage", (nvmlDevice_t d, unsigned *mw))          \
    X(nvmlDeviceGetTotalEnergyConsumption, "nvmlDeviceGetTotalEnergyConsumption",                  \
      (nvmlDevice_t d, unsigned long long *mj))                                                    \
    X(nvmlDeviceGetPowerManagementDefaultLimit, "nvmlDeviceGetPowerManagementDefaultLimit",        \
      (nvmlDevice_t d, unsigned *mw))

static struct {
#define PG__NVML_FIELD(name, sym, params) nvmlReturn_t(*name) params;
    PG__NVML_FUNCS(PG__NVML_FIELD)
#undef PG__NVML_FIELD
    const char *(*nvmlErrorString)(nvmlReturn_t r);
} nv;
static int loaded;
static char load_error[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static const char *describe(nvmlReturn_t r) {
    const char *s = nv.nvmlErrorString ? nv.nvmlErrorString(r) : NULL;
    return s ? s : "unknown NVML error";
}

static void load(void) {
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(load_error, sizeof load_error,
                 "NVML not found (libnvidia-ml.so.1: %s); power and energy are unknown", dlerror());
        return;
    }
    *(void **)&nv.nvmlErrorString = dlsym(h, "nvmlErrorString");
#define PG__NVML_LOAD(name, sym, params)                                                           \
    *(void **)&nv.name = dlsym(h, sym);                                                            \
    if (!nv.name) {                                                                                \
        snprintf(load_error, sizeof load_error,                                                    \
                 "NVML (libnvidia-ml.so.1) lacks %s; power and energy are unknown", sym);          \
        return;                                                                                    \
    }
    PG__NVML_FUNCS(PG__NVML_LOAD)
#undef PG__NVML_LOAD
    nvmlReturn_t r = nv.nvmlInit();
    if (r) {
        snprintf(load_error, sizeof load_error,
                 "NVML did not start (nvmlInit: %s); power and energy are unknown", describe(r));
        return;
    }
    loaded = 1;
}

pg__nvml_gpu *pg__nvml_find(const char *uuid, const char *pci_bus_id, char *why, size_t cap) {
    pthread_once(&once, load);
    if (!loaded) {
        if (why)
            snprintf(why, cap, "%s", load_error);
        return NULL;
    }
    nvmlDevice_t d = NULL;
    const char *by_uuid = "no UUID", *by_bus = "no PCI bus id";
    if (uuid && *uuid) {
        nvmlReturn_t r = nv.nvmlDeviceGetHandleByUUID(uuid, &d);
        if (r == 0 && d)
            return d;
        by_uuid = r ? describe(r) : "no device";
    }
    /* MIG instances and some virtual GPUs have UUIDs NVML's lookup does not take: the board's
     * PCI address names it as well. */
    if (pci_bus_id && *pci_bus_id) {
        nvmlReturn_t r = nv.nvmlDeviceGetHandleByPciBusId(pci_bus_id, &d);
        if (r == 0 && d)
            return d;
        by_bus = r ? describe(r) : "no device";
    }
    if (why)
        snprintf(why, cap, "NVML knows neither UUID %s (%s) nor PCI bus id %s (%s)",
                 uuid ? uuid : "?", by_uuid, pci_bus_id ? pci_bus_id : "?", by_bus);
    return NULL;
}

int pg__nvml_power_mw(pg__nvml_gpu *g, unsigned *mw) {
    return g && loaded && nv.nvmlDeviceGetPowerUsage(g, mw) == 0;
}

int pg__nvml_energy_mj(pg__nvml_gpu *g, uint64_t *mj) {
    unsigned long long v = 0;
    if (!g || !loaded || nv.nvmlDeviceGetTotalEnergyConsumption(g, &v) != 0)
        return 0;
    *mj = v;
    return 1;
}

int pg__nvml_default_limit_mw(pg__nvml_gpu *g, unsigned *mw) {
    return g && loaded && nv.nvmlDeviceGetPowerManagementDefaultLimit(g, mw) == 0;
}
