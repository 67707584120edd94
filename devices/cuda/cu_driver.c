/* cu_driver.c: loads libcuda.so.1 with dlopen and resolves the entry points polygpu uses. */
#include "devices/cuda/cu_driver.h"
#include "core/error.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static pg__cu table;
static const pg__cu *loaded;
static char load_error[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(load_error, sizeof load_error,
                 "CUDA driver not found (libcuda.so.1: %s): install the NVIDIA driver, or use "
                 "devices=host:N",
                 dlerror());
        return;
    }
#define PG__CU_LOAD(name, sym, params)                                                             \
    *(void **)&table.name = dlsym(h, sym);                                                         \
    if (!table.name) {                                                                             \
        snprintf(load_error, sizeof load_error,                                                    \
                 "the CUDA driver (libcuda.so.1) lacks %s: update the NVIDIA driver", sym);        \
        return;                                                                                    \
    }
    PG__CU_FUNCS(PG__CU_LOAD)
#undef PG__CU_LOAD
    loaded = &table;
}

const pg__cu *pg__cu_load(void) {
    pthread_once(&once, load);
    if (!loaded)
        pg__error(PG_ERROR_DEVICE, "%s", load_error);
    return loaded;
}

int pg__cu_error(const pg__cu *cu, CUresult r, const char *what) {
    const char *name = "CUDA_ERROR_UNKNOWN", *text = "";
    if (cu->cuGetErrorName(r, &name) != CUDA_SUCCESS)
        name = "CUDA_ERROR_UNKNOWN";
    if (cu->cuGetErrorString(r, &text) != CUDA_SUCCESS)
        text = "";
    return pg__error(r == CUDA_ERROR_OUT_OF_MEMORY ? PG_ERROR_OUT_OF_MEMORY : PG_ERROR_DEVICE,
                     "%s failed: %s (%s)", what, name, text);
}
