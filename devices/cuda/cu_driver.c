/* cu_driver.c: loads libcuda.so.1 with dlopen and resolves the entry points polygpu uses. */
#include "devices/cuda/cu_driver.h"
#include "base/error.h"

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
        /* dlerror() already names the file ("libcuda.so.1: cannot open shared object file..."). */
        const char *why = dlerror();
        snprintf(load_error, sizeof load_error,
                 "CUDA driver not found (%s): install the NVIDIA driver, or use devices=host:N",
                 why ? why : "libcuda.so.1 could not be loaded");
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

void pg__cu_describe(const pg__cu *cu, CUresult r, char *out, size_t cap) {
    const char *name = "CUDA_ERROR_UNKNOWN", *text = "";
    if (cu->cuGetErrorName(r, &name) != CUDA_SUCCESS)
        name = "CUDA_ERROR_UNKNOWN";
    if (cu->cuGetErrorString(r, &text) != CUDA_SUCCESS)
        text = "";
    snprintf(out, cap, "%s (%s)", name, text);
}

int pg__cu_error(const pg__cu *cu, CUresult r, const char *what) {
    char d[256];
    pg__cu_describe(cu, r, d, sizeof d);
    /* A kept fault fails every later call in the context, whatever the call: say that the
     * call itself is not the cause (a pinned host allocation failing with an illegal address
     * read as if the allocation had faulted). */
    if (pg__cu_sticky(r))
        return pg__error(PG_ERROR_DEVICE,
                         "%s failed: %s. The GPU is unusable for the rest of this process: "
                         "earlier work on it (a kernel) faulted, and CUDA keeps such a fault "
                         "(CUDA errors of this kind are sticky), so every later call on that "
                         "GPU fails with it, this one too. Fix the kernel (compute-sanitizer "
                         "finds the bad access) and restart the process: a new process gets a "
                         "working GPU",
                         what, d);
    return pg__error(r == CUDA_ERROR_OUT_OF_MEMORY ? PG_ERROR_OUT_OF_MEMORY : PG_ERROR_DEVICE,
                     "%s failed: %s", what, d);
}

int pg__cu_init_error(const pg__cu *cu, CUresult r, long init_pid, long pid) {
    char d[256];
    pg__cu_describe(cu, r, d, sizeof d);
    if (init_pid && init_pid != pid)
        return pg__error(PG_ERROR_DEVICE,
                         "cuInit failed: %s: this process (pid %ld) is a fork() child of a "
                         "process that had initialised CUDA (pid %ld), and CUDA cannot be used "
                         "in a forked child once its parent initialised it. Start the work in a "
                         "fresh process instead: Python's multiprocessing with the 'spawn' (or "
                         "'forkserver') start method, fork followed by exec, or a new program; "
                         "or fork before any process uses CUDA",
                         d, pid, init_pid);
    if (r == CUDA_ERROR_NOT_INITIALIZED)
        return pg__error(PG_ERROR_DEVICE,
                         "cuInit (no usable NVIDIA GPU or driver) failed: %s. In a fork() child "
                         "of a process that used CUDA (through any library), CUDA cannot be "
                         "used: start the work with 'spawn' or in a fresh process",
                         d);
    return pg__cu_error(cu, r, "cuInit (no usable NVIDIA GPU or driver)");
}

int pg__cu_sticky(CUresult r) {
    switch (r) {
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
        return 1;
    default:
        return 0;
    }
}
