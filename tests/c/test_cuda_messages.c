/* test_cuda_messages.c: what the CUDA backend says when CUDA itself cannot go on, checked without
 * a GPU (the GPU script checks the same on a real one, tests/gpu/run.sh):
 * - a fault CUDA keeps (an illegal address...) fails every later call on that GPU, whatever the
 *   call: the message of such a call says the GPU is unusable for the process after an earlier
 *   fault, that CUDA errors of that kind are sticky, and what to do (it used to read as if a
 *   pinned host allocation had faulted);
 * - cuInit in a fork() child of a process that had initialised CUDA: the message says CUDA
 *   cannot be used in a forked child, and to use spawn or a fresh process;
 * - the core adds which device failed earlier and the kernel that failed there (here a CPU
 *   device's trap stands in for the GPU's fault) to a device error of a later call. */
#include "check.h"
#include "core/coherence.h"
#include "core/handle.h"
#include "devices/cuda/cu_driver.h"

#include <stdio.h>
#include <string.h>

static CUresult error_name(CUresult e, const char **s) {
    *s = e == CUDA_ERROR_ILLEGAL_ADDRESS   ? "CUDA_ERROR_ILLEGAL_ADDRESS"
         : e == CUDA_ERROR_NOT_INITIALIZED ? "CUDA_ERROR_NOT_INITIALIZED"
         : e == CUDA_ERROR_OUT_OF_MEMORY   ? "CUDA_ERROR_OUT_OF_MEMORY"
                                           : "CUDA_ERROR_UNKNOWN";
    return CUDA_SUCCESS;
}

static CUresult error_string(CUresult e, const char **s) {
    *s = e == CUDA_ERROR_ILLEGAL_ADDRESS ? "an illegal memory access was encountered"
                                         : "initialization error";
    return CUDA_SUCCESS;
}

static void driver_messages(void) {
    pg__cu cu;
    memset(&cu, 0, sizeof cu);
    cu.cuGetErrorName = error_name;
    cu.cuGetErrorString = error_string;

    /* The call after a kernel's fault: a pinned host allocation. */
    CHECK(pg__cu_error(&cu, CUDA_ERROR_ILLEGAL_ADDRESS, "cuMemHostAlloc (pinned host memory)") ==
          PG_ERROR_DEVICE);
    const char *m = pg_last_error();
    CHECK(strstr(m, "cuMemHostAlloc (pinned host memory) failed: CUDA_ERROR_ILLEGAL_ADDRESS") !=
          NULL);
    CHECK(strstr(m, "unusable for the rest of this process") != NULL);
    CHECK(strstr(m, "sticky") != NULL);
    CHECK(strstr(m, "earlier work on it (a kernel) faulted") != NULL);
    CHECK(strstr(m, "restart the process") != NULL);
    /* Errors CUDA does not keep read as before. */
    CHECK(pg__cu_error(&cu, CUDA_ERROR_OUT_OF_MEMORY, "cuMemAllocAsync") == PG_ERROR_OUT_OF_MEMORY);
    CHECK(!strstr(pg_last_error(), "sticky"));

    /* cuInit in a fork() child of a process that had initialised CUDA through polygpu. */
    CHECK(pg__cu_init_error(&cu, CUDA_ERROR_NOT_INITIALIZED, 1000, 1001) == PG_ERROR_DEVICE);
    m = pg_last_error();
    CHECK(strstr(m, "CUDA_ERROR_NOT_INITIALIZED") != NULL);
    CHECK(strstr(m, "fork() child of a process that had initialised CUDA (pid 1000)") != NULL);
    CHECK(strstr(m, "cannot be used in a forked child") != NULL);
    CHECK(strstr(m, "'spawn'") != NULL && strstr(m, "fresh process") != NULL);
    /* Not initialised without polygpu's own earlier init (another library's): still a hint. */
    CHECK(pg__cu_init_error(&cu, CUDA_ERROR_NOT_INITIALIZED, 0, 1001) == PG_ERROR_DEVICE);
    CHECK(strstr(pg_last_error(), "fork() child") != NULL);
    CHECK(strstr(pg_last_error(), "spawn") != NULL);
    /* The same process, another cause: the plain message. */
    CHECK(pg__cu_init_error(&cu, CUDA_ERROR_OUT_OF_MEMORY, 1001, 1001) == PG_ERROR_OUT_OF_MEMORY);
    CHECK(strstr(pg_last_error(), "cuInit (no usable NVIDIA GPU or driver) failed") != NULL);
    CHECK(!strstr(pg_last_error(), "fork"));
}

static const char *TRAP_SRC =
    "extern \"C\" __global__ void trap(float *y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;\n"
    "  y[i] = 1.0f; if (i == n - 1) __trap(); }\n";

static void core_names_the_earlier_fault(void) {
    pg_options o;
    pg_options_init(&o);
    o.devices = "host:2";
    o.policy = "round-robin";
    pg_runtime *rt = NULL;
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    pg_kernel *k = NULL;
    REQUIRE_OK(pg_kernel_new(rt, TRAP_SRC, "trap", NULL, NULL, &k));
    int64_t n = 64;
    pg_array *y = NULL;
    REQUIRE_OK(pg_array_new(rt, PG_FLOAT32, 1, &n, &y));
    pg_arg a[] = {pg_arg_array(y), pg_arg_int(64)};
    pg_dim3 one = {1, 1, 1}, b64 = {64, 1, 1};
    CHECK_OK(pg_kernel_launch(k, one, b64, 0, a, 2));
    CHECK_STATUS(pg_runtime_sync(rt), PG_ERROR_DEVICE); /* the trap, reported */
    /* A later backend call failing with a device error (as every call on a GPU does after a
     * kept fault) names the device and the kernel that failed there. */
    pg__runtime *r = pg__enter_runtime(rt, "test");
    REQUIRE_OK(r ? PG_OK : PG_ERROR_STATE);
    pg__error(PG_ERROR_DEVICE, "cuMemHostAlloc (pinned host memory) failed: X");
    CHECK(pg__coh_fault_cause(r, PG_ERROR_DEVICE) == PG_ERROR_DEVICE);
    const char *m = pg_last_error();
    CHECK(strstr(m, "cuMemHostAlloc (pinned host memory) failed: X (CPU device ") != NULL);
    CHECK(strstr(m, "failed earlier: kernel 'trap'") != NULL);
    /* Other errors are left alone. */
    pg__error(PG_ERROR_OUT_OF_MEMORY, "out of memory");
    CHECK(pg__coh_fault_cause(r, PG_ERROR_OUT_OF_MEMORY) == PG_ERROR_OUT_OF_MEMORY);
    CHECK(!strcmp(pg_last_error(), "out of memory"));
    pg__leave(r);
    pg_kernel_free(k);
    pg_array_free(y);
    pg_runtime_free(rt);
}

int main(void) {
    driver_messages();
    core_names_the_earlier_fault();
    CHECK_DONE();
}
