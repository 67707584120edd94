/* cu_cupti_abi.h: the part of CUPTI's activity API polygpu uses, declared here so the library
 * builds without the CUDA toolkit (as cu_driver.h declares the driver). Values and record
 * layouts are copied from CUPTI's headers (CUDA 13.0: cupti_activity.h, cupti_result.h,
 * cupti_driver_cbid.h, cupti_runtime_cbid.h). A record struct here is the *prefix* of CUPTI's,
 * up to the last field read: CUPTI appends fields when it versions a record (Kernel4 .. Kernel10,
 * Memcpy5 .. Memcpy6), so the prefix stays valid across versions, and records are walked with
 * cuptiActivityGetNextRecord, never by their size. tests/cudadouble/cupti_layout.c checks every
 * offset against the real headers when they are installed. */
#ifndef PG_CU_CUPTI_ABI_H
#define PG_CU_CUPTI_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef int pg__cupti_result;

enum {
    PG__CUPTI_SUCCESS = 0,
    PG__CUPTI_ERROR_MAX_LIMIT_REACHED = 12,
    PG__CUPTI_ERROR_NOT_INITIALIZED = 15,
    PG__CUPTI_ERROR_INVALID_KIND = 21,
    PG__CUPTI_ERROR_INSUFFICIENT_PRIVILEGES = 35,
    /* CUpti_ActivityKind */
    PG__CUPTI_ACTIVITY_KIND_MEMCPY = 1,
    PG__CUPTI_ACTIVITY_KIND_MEMSET = 2,
    PG__CUPTI_ACTIVITY_KIND_DRIVER = 4,
    PG__CUPTI_ACTIVITY_KIND_RUNTIME = 5,
    PG__CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL = 10,
    PG__CUPTI_ACTIVITY_KIND_MEMCPY2 = 22, /* peer to peer copies */
    PG__CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION = 39,
    /* CUpti_ExternalCorrelationKind */
    PG__CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 = 3,
    /* CUpti_ActivityFlag */
    PG__CUPTI_ACTIVITY_FLAG_FLUSH_FORCED = 1,
    /* CUpti_ActivityMemcpyKind */
    PG__CUPTI_ACTIVITY_MEMCPY_KIND_HTOD = 1,
    PG__CUPTI_ACTIVITY_MEMCPY_KIND_DTOH = 2,
    PG__CUPTI_ACTIVITY_MEMCPY_KIND_DTOD = 8,
    PG__CUPTI_ACTIVITY_MEMCPY_KIND_HTOH = 9,
    PG__CUPTI_ACTIVITY_MEMCPY_KIND_PTOP = 10,
};

/* Driver and runtime API calls that enqueue GPU work: their API records carry the external
 * correlation (the computation's id) to the correlation id the kernel or copy record has. */
#define PG__CUPTI_DRIVER_CBIDS                                                                     \
    216 /* cuMemsetD8Async */, 220 /* cuMemsetD32Async */, 277 /* cuMemcpyHtoDAsync_v2 */,         \
        279 /* cuMemcpyDtoHAsync_v2 */, 281 /* cuMemcpyDtoDAsync_v2 */, 306 /* cuMemcpyAsync */,   \
        307 /* cuLaunchKernel */, 319 /* cuMemcpyPeerAsync */, 418 /* cuMemcpyAsync_ptsz */,       \
        442 /* cuLaunchKernel_ptsz */, 477 /* cuLaunchCooperativeKernel */,                        \
        514 /* cuGraphLaunch */, 515 /* cuGraphLaunch_ptsz */, 652 /* cuLaunchKernelEx */,         \
        653 /* cuLaunchKernelEx_ptsz */
/* Libraries a task calls (cuBLAS) launch through the runtime. */
#define PG__CUPTI_RUNTIME_CBIDS                                                                    \
    41 /* cudaMemcpyAsync_v3020 */, 51 /* cudaMemsetAsync_v3020 */,                                \
        211 /* cudaLaunchKernel_v7000 */, 214 /* cudaLaunchKernel_ptsz_v7000 */,                   \
        311 /* cudaGraphLaunch_v10000 */, 430 /* cudaLaunchKernelExC_v11060 */,                    \
        431 /* cudaLaunchKernelExC_ptsz_v11060 */

/* PACKED_ALIGNMENT of cupti_common.h on GCC and Clang. */
#define PG__CUPTI_RECORD __attribute__((__packed__)) __attribute__((aligned(8)))

typedef struct PG__CUPTI_RECORD {
    int32_t kind; /* CUpti_ActivityKind */
} pg__cupti_activity;

/* CUpti_ActivityKernel10, up to name. */
typedef struct PG__CUPTI_RECORD {
    int32_t kind;
    uint8_t cacheConfig;
    uint8_t sharedMemoryConfig;
    uint16_t registersPerThread;
    int32_t partitionedGlobalCacheRequested;
    int32_t partitionedGlobalCacheExecuted;
    uint64_t start;
    uint64_t end;
    uint64_t completed;
    uint32_t deviceId;
    uint32_t contextId;
    uint32_t streamId;
    int32_t gridX, gridY, gridZ;
    int32_t blockX, blockY, blockZ;
    int32_t staticSharedMemory;
    int32_t dynamicSharedMemory;
    uint32_t localMemoryPerThread;
    uint32_t localMemoryTotal;
    uint32_t correlationId;
    int64_t gridId;
    const char *name;
} pg__cupti_kernel;

/* CUpti_ActivityMemcpy6, up to correlationId. */
typedef struct PG__CUPTI_RECORD {
    int32_t kind;
    uint8_t copyKind;
    uint8_t srcKind;
    uint8_t dstKind;
    uint8_t flags;
    uint64_t bytes;
    uint64_t start;
    uint64_t end;
    uint32_t deviceId;
    uint32_t contextId;
    uint32_t streamId;
    uint32_t correlationId;
} pg__cupti_memcpy;

/* CUpti_ActivityMemcpyPtoP4, up to correlationId (PG__CUPTI_ACTIVITY_KIND_MEMCPY2). */
typedef struct PG__CUPTI_RECORD {
    int32_t kind;
    uint8_t copyKind;
    uint8_t srcKind;
    uint8_t dstKind;
    uint8_t flags;
    uint64_t bytes;
    uint64_t start;
    uint64_t end;
    uint32_t deviceId;
    uint32_t contextId;
    uint32_t streamId;
    uint32_t srcDeviceId;
    uint32_t srcContextId;
    uint32_t dstDeviceId;
    uint32_t dstContextId;
    uint32_t correlationId;
} pg__cupti_memcpy2;

/* CUpti_ActivityMemset4, up to correlationId. */
typedef struct PG__CUPTI_RECORD {
    int32_t kind;
    uint32_t value;
    uint64_t bytes;
    uint64_t start;
    uint64_t end;
    uint32_t deviceId;
    uint32_t contextId;
    uint32_t streamId;
    uint32_t correlationId;
} pg__cupti_memset;

/* CUpti_ActivityAPI (driver and runtime calls). */
typedef struct PG__CUPTI_RECORD {
    int32_t kind;
    uint32_t cbid;
    uint64_t start;
    uint64_t end;
    uint32_t processId;
    uint32_t threadId;
    uint32_t correlationId;
    uint32_t returnValue;
} pg__cupti_api;

/* CUpti_ActivityExternalCorrelation. */
typedef struct PG__CUPTI_RECORD {
    int32_t kind;
    int32_t externalKind;
    uint64_t externalId;
    uint32_t correlationId;
    uint32_t reserved;
} pg__cupti_external;

typedef struct CUctx_st *pg__cupti_context; /* a CUcontext */
typedef void (*pg__cupti_buffer_requested)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*pg__cupti_buffer_completed)(pg__cupti_context ctx, uint32_t stream_id,
                                           uint8_t *buffer, size_t size, size_t valid);

/* X(field, symbol, parameter list): every entry point used; the last ones are optional. */
#define PG__CUPTI_FUNCS(X)                                                                         \
    X(cuptiGetResultString, "cuptiGetResultString", (pg__cupti_result r, const char **s))          \
    X(cuptiActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks",                            \
      (pg__cupti_buffer_requested req, pg__cupti_buffer_completed done))                           \
    X(cuptiActivityEnable, "cuptiActivityEnable", (int32_t kind))                                  \
    X(cuptiActivityDisable, "cuptiActivityDisable", (int32_t kind))                                \
    X(cuptiActivityFlushAll, "cuptiActivityFlushAll", (uint32_t flag))                             \
    X(cuptiActivityGetNextRecord, "cuptiActivityGetNextRecord",                                    \
      (uint8_t * buffer, size_t valid, pg__cupti_activity * *record))                              \
    X(cuptiActivityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords",                      \
      (pg__cupti_context ctx, uint32_t stream_id, size_t * dropped))                               \
    X(cuptiActivityPushExternalCorrelationId, "cuptiActivityPushExternalCorrelationId",            \
      (int32_t kind, uint64_t id))                                                                 \
    X(cuptiActivityPopExternalCorrelationId, "cuptiActivityPopExternalCorrelationId",              \
      (int32_t kind, uint64_t * last))                                                             \
    X(cuptiGetTimestamp, "cuptiGetTimestamp", (uint64_t * ts))                                     \
    X(cuptiGetDeviceId, "cuptiGetDeviceId", (pg__cupti_context ctx, uint32_t * id))
/* Fine-grained API records (CUDA 12.x and later); without them every driver and runtime call
 * is recorded. */
#define PG__CUPTI_OPTIONAL(X)                                                                      \
    X(cuptiActivityEnableDriverApi, "cuptiActivityEnableDriverApi", (uint32_t cbid, uint8_t on))   \
    X(cuptiActivityEnableRuntimeApi, "cuptiActivityEnableRuntimeApi", (uint32_t cbid, uint8_t on))

#endif
