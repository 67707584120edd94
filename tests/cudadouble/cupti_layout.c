/* cupti_layout.c: devices/cuda/cu_cupti_abi.h against CUPTI's own headers, where the CUDA
 * toolkit is installed (CMake finds cupti_activity.h): every record field polygpu reads must sit
 * at CUPTI's offset, and every value match. Compiling is the test; running it says so. */
#include "devices/cuda/cu_cupti_abi.h"

#include <cupti.h>
#include <stdio.h>

#define SAME_FIELD(ours, theirs, f)                                                                \
    _Static_assert(offsetof(ours, f) == offsetof(theirs, f), #theirs "." #f " moved");             \
    _Static_assert(sizeof(((ours *)0)->f) == sizeof(((theirs *)0)->f), #theirs "." #f " resized")
#define SAME_VALUE(ours, theirs) _Static_assert((ours) == (theirs), #ours " differs")

SAME_FIELD(pg__cupti_kernel, CUpti_ActivityKernel10, kind);
SAME_FIELD(pg__cupti_kernel, CUpti_ActivityKernel10, start);
SAME_FIELD(pg__cupti_kernel, CUpti_ActivityKernel10, end);
SAME_FIELD(pg__cupti_kernel, CUpti_ActivityKernel10, deviceId);
SAME_FIELD(pg__cupti_kernel, CUpti_ActivityKernel10, contextId);
SAME_FIELD(pg__cupti_kernel, CUpti_ActivityKernel10, streamId);
SAME_FIELD(pg__cupti_kernel, CUpti_ActivityKernel10, gridX);
SAME_FIELD(pg__cupti_kernel, CUpti_ActivityKernel10, blockZ);
SAME_FIELD(pg__cupti_kernel, CUpti_ActivityKernel10, correlationId);
SAME_FIELD(pg__cupti_kernel, CUpti_ActivityKernel10, gridId);
SAME_FIELD(pg__cupti_kernel, CUpti_ActivityKernel10, name);
SAME_FIELD(pg__cupti_memcpy, CUpti_ActivityMemcpy6, kind);
SAME_FIELD(pg__cupti_memcpy, CUpti_ActivityMemcpy6, copyKind);
SAME_FIELD(pg__cupti_memcpy, CUpti_ActivityMemcpy6, bytes);
SAME_FIELD(pg__cupti_memcpy, CUpti_ActivityMemcpy6, start);
SAME_FIELD(pg__cupti_memcpy, CUpti_ActivityMemcpy6, end);
SAME_FIELD(pg__cupti_memcpy, CUpti_ActivityMemcpy6, deviceId);
SAME_FIELD(pg__cupti_memcpy, CUpti_ActivityMemcpy6, streamId);
SAME_FIELD(pg__cupti_memcpy, CUpti_ActivityMemcpy6, correlationId);
SAME_FIELD(pg__cupti_memcpy2, CUpti_ActivityMemcpyPtoP4, copyKind);
SAME_FIELD(pg__cupti_memcpy2, CUpti_ActivityMemcpyPtoP4, bytes);
SAME_FIELD(pg__cupti_memcpy2, CUpti_ActivityMemcpyPtoP4, start);
SAME_FIELD(pg__cupti_memcpy2, CUpti_ActivityMemcpyPtoP4, end);
SAME_FIELD(pg__cupti_memcpy2, CUpti_ActivityMemcpyPtoP4, deviceId);
SAME_FIELD(pg__cupti_memcpy2, CUpti_ActivityMemcpyPtoP4, streamId);
SAME_FIELD(pg__cupti_memcpy2, CUpti_ActivityMemcpyPtoP4, srcDeviceId);
SAME_FIELD(pg__cupti_memcpy2, CUpti_ActivityMemcpyPtoP4, dstDeviceId);
SAME_FIELD(pg__cupti_memcpy2, CUpti_ActivityMemcpyPtoP4, correlationId);
SAME_FIELD(pg__cupti_memset, CUpti_ActivityMemset4, bytes);
SAME_FIELD(pg__cupti_memset, CUpti_ActivityMemset4, start);
SAME_FIELD(pg__cupti_memset, CUpti_ActivityMemset4, end);
SAME_FIELD(pg__cupti_memset, CUpti_ActivityMemset4, deviceId);
SAME_FIELD(pg__cupti_memset, CUpti_ActivityMemset4, streamId);
SAME_FIELD(pg__cupti_memset, CUpti_ActivityMemset4, correlationId);
SAME_FIELD(pg__cupti_api, CUpti_ActivityAPI, cbid);
SAME_FIELD(pg__cupti_api, CUpti_ActivityAPI, start);
SAME_FIELD(pg__cupti_api, CUpti_ActivityAPI, end);
SAME_FIELD(pg__cupti_api, CUpti_ActivityAPI, threadId);
SAME_FIELD(pg__cupti_api, CUpti_ActivityAPI, correlationId);
SAME_FIELD(pg__cupti_external, CUpti_ActivityExternalCorrelation, externalKind);
SAME_FIELD(pg__cupti_external, CUpti_ActivityExternalCorrelation, externalId);
SAME_FIELD(pg__cupti_external, CUpti_ActivityExternalCorrelation, correlationId);

SAME_VALUE(PG__CUPTI_ACTIVITY_KIND_MEMCPY, (int)CUPTI_ACTIVITY_KIND_MEMCPY);
SAME_VALUE(PG__CUPTI_ACTIVITY_KIND_MEMSET, (int)CUPTI_ACTIVITY_KIND_MEMSET);
SAME_VALUE(PG__CUPTI_ACTIVITY_KIND_DRIVER, (int)CUPTI_ACTIVITY_KIND_DRIVER);
SAME_VALUE(PG__CUPTI_ACTIVITY_KIND_RUNTIME, (int)CUPTI_ACTIVITY_KIND_RUNTIME);
SAME_VALUE(PG__CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, (int)CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
SAME_VALUE(PG__CUPTI_ACTIVITY_KIND_MEMCPY2, (int)CUPTI_ACTIVITY_KIND_MEMCPY2);
SAME_VALUE(PG__CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
           (int)CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
SAME_VALUE(PG__CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, (int)CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
SAME_VALUE(PG__CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, (int)CUPTI_ACTIVITY_MEMCPY_KIND_DTOH);
SAME_VALUE(PG__CUPTI_SUCCESS, (int)CUPTI_SUCCESS);
SAME_VALUE(PG__CUPTI_ERROR_NOT_INITIALIZED, (int)CUPTI_ERROR_NOT_INITIALIZED);
SAME_VALUE(PG__CUPTI_ERROR_MAX_LIMIT_REACHED, (int)CUPTI_ERROR_MAX_LIMIT_REACHED);
SAME_VALUE(PG__CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, (int)CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
SAME_VALUE(PG__CUPTI_ERROR_INVALID_KIND, (int)CUPTI_ERROR_INVALID_KIND);
SAME_VALUE(PG__CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
           (int)CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
SAME_VALUE(PG__CUPTI_ACTIVITY_FLAG_FLUSH_FORCED, (int)CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
SAME_VALUE(PG__CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, (int)CUPTI_ACTIVITY_MEMCPY_KIND_PTOP);
SAME_VALUE(PG__CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, (int)CUPTI_ACTIVITY_MEMCPY_KIND_DTOD);
SAME_VALUE(PG__CUPTI_ACTIVITY_MEMCPY_KIND_HTOH, (int)CUPTI_ACTIVITY_MEMCPY_KIND_HTOH);

static const uint32_t driver[] = {PG__CUPTI_DRIVER_CBIDS};
static const uint32_t expect_driver[] = {CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async,
                                         CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async,
                                         CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2,
                                         CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2,
                                         CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2,
                                         CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync,
                                         CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                                         CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeerAsync,
                                         CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz,
                                         CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
                                         CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
                                         CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
                                         CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
                                         CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
                                         CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz};
static const uint32_t runtime[] = {PG__CUPTI_RUNTIME_CBIDS};
static const uint32_t expect_runtime[] = {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
                                          CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,
                                          CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                                          CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
                                          CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
                                          CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
                                          CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060};
_Static_assert(sizeof driver == sizeof expect_driver, "driver callback ids: count differs");
_Static_assert(sizeof runtime == sizeof expect_runtime, "runtime callback ids: count differs");

int main(void) {
    for (size_t i = 0; i < sizeof driver / sizeof *driver; i++)
        if (driver[i] != expect_driver[i]) {
            fprintf(stderr, "driver callback id %zu: %u, CUPTI says %u\n", i, driver[i],
                    expect_driver[i]);
            return 1;
        }
    for (size_t i = 0; i < sizeof runtime / sizeof *runtime; i++)
        if (runtime[i] != expect_runtime[i]) {
            fprintf(stderr, "runtime callback id %zu: %u, CUPTI says %u\n", i, runtime[i],
                    expect_runtime[i]);
            return 1;
        }
    printf("cu_cupti_abi.h matches CUPTI %d's headers\n", CUPTI_API_VERSION);
    return 0;
}
