/* cu_driver.h: the part of the CUDA driver API polygpu uses, declared here (values from the
 * driver API's documented ABI) so the library builds without a CUDA toolkit, and loaded with
 * dlopen at run time so no binary links libcuda. */
#ifndef PG_CU_DRIVER_H
#define PG_CU_DRIVER_H

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef unsigned long long CUdeviceptr;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUkern_st *CUkernel;
typedef struct {
    CUfunction func;
    unsigned gridDimX, gridDimY, gridDimZ;
    unsigned blockDimX, blockDimY, blockDimZ;
    unsigned sharedMemBytes;
    void **kernelParams;
    void **extra;
    CUkernel kern; /* NULL: func is used */
    CUcontext ctx; /* the context (device) the kernel runs in */
} CUDA_KERNEL_NODE_PARAMS_v2;
typedef struct {
    size_t srcXInBytes, srcY, srcZ, srcLOD;
    int srcMemoryType;
    const void *srcHost;
    CUdeviceptr srcDevice;
    void *srcArray;
    void *reserved0;
    size_t srcPitch, srcHeight;
    size_t dstXInBytes, dstY, dstZ, dstLOD;
    int dstMemoryType;
    void *dstHost;
    CUdeviceptr dstDevice;
    void *dstArray;
    void *reserved1;
    size_t dstPitch, dstHeight;
    size_t WidthInBytes, Height, Depth;
} CUDA_MEMCPY3D;
typedef struct {
    char bytes[16];
} CUuuid;
typedef struct {
    int type; /* CU_MEM_LOCATION_TYPE_DEVICE */
    int id;
} CUmemLocation;
typedef struct {
    CUmemLocation location;
    int flags; /* CU_MEM_ACCESS_FLAGS_PROT_READWRITE */
} CUmemAccessDesc;

enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_NOT_READY = 600,
    CUDA_ERROR_ECC_UNCORRECTABLE = 214,
    CUDA_ERROR_ILLEGAL_ADDRESS = 700,
    CUDA_ERROR_LAUNCH_TIMEOUT = 702,
    CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
    CUDA_ERROR_ASSERT = 710,
    CUDA_ERROR_HARDWARE_STACK_ERROR = 714,
    CUDA_ERROR_ILLEGAL_INSTRUCTION = 715,
    CUDA_ERROR_MISALIGNED_ADDRESS = 716,
    CUDA_ERROR_INVALID_ADDRESS_SPACE = 717,
    CUDA_ERROR_INVALID_PC = 718,
    CUDA_ERROR_LAUNCH_FAILED = 719,
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
    CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
    CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115,
    CU_STREAM_NON_BLOCKING = 1,
    CU_STREAM_WAIT_VALUE_GEQ = 0,
    CU_EVENT_DEFAULT = 0,
    CU_EVENT_DISABLE_TIMING = 2,
    CU_MEMHOSTALLOC_PORTABLE = 1,
    CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4,
    CU_MEM_LOCATION_TYPE_DEVICE = 1,
    CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3,
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
    CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
    CU_MEMORYTYPE_HOST = 1,
    CU_MEMORYTYPE_DEVICE = 2,
    CU_MEMORYTYPE_UNIFIED = 4,
};

/* X(return-less name, symbol, parameter list) for every entry point used. */
#define PG__CU_FUNCS(X)                                                                            \
    X(cuInit, "cuInit", (unsigned flags))                                                          \
    X(cuGetErrorName, "cuGetErrorName", (CUresult e, const char **s))                              \
    X(cuGetErrorString, "cuGetErrorString", (CUresult e, const char **s))                          \
    X(cuDeviceGetCount, "cuDeviceGetCount", (int *n))                                              \
    X(cuDeviceGet, "cuDeviceGet", (CUdevice * d, int ordinal))                                     \
    X(cuDeviceGetName, "cuDeviceGetName", (char *name, int len, CUdevice d))                       \
    X(cuDeviceTotalMem, "cuDeviceTotalMem_v2", (size_t * bytes, CUdevice d))                       \
    X(cuDeviceGetAttribute, "cuDeviceGetAttribute", (int *v, int attr, CUdevice d))                \
    X(cuDeviceGetUuid, "cuDeviceGetUuid_v2", (CUuuid * u, CUdevice d))                             \
    X(cuDeviceGetPCIBusId, "cuDeviceGetPCIBusId", (char *bus, int len, CUdevice d))                \
    X(cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer", (int *can, CUdevice d, CUdevice peer))       \
    X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (CUcontext * c, CUdevice d))           \
    X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", (CUdevice d))                     \
    X(cuDeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool", (CUmemoryPool * p, CUdevice d))      \
    X(cuCtxSetCurrent, "cuCtxSetCurrent", (CUcontext c))                                           \
    X(cuCtxEnablePeerAccess, "cuCtxEnablePeerAccess", (CUcontext peer, unsigned flags))            \
    X(cuMemPoolSetAttribute, "cuMemPoolSetAttribute", (CUmemoryPool p, int attr, void *v))         \
    X(cuMemPoolSetAccess, "cuMemPoolSetAccess",                                                    \
      (CUmemoryPool p, const CUmemAccessDesc *map, size_t count))                                  \
    X(cuStreamCreate, "cuStreamCreate", (CUstream * s, unsigned flags))                            \
    X(cuStreamDestroy, "cuStreamDestroy_v2", (CUstream s))                                         \
    X(cuStreamSynchronize, "cuStreamSynchronize", (CUstream s))                                    \
    X(cuPointerGetAttributes, "cuPointerGetAttributes",                                            \
      (unsigned n, int *attrs, void **data, CUdeviceptr p))                                        \
    X(cuStreamWaitEvent, "cuStreamWaitEvent", (CUstream s, CUevent e, unsigned flags))             \
    X(cuStreamWaitValue32, "cuStreamWaitValue32_v2",                                               \
      (CUstream s, CUdeviceptr addr, unsigned value, unsigned flags))                              \
    X(cuEventCreate, "cuEventCreate", (CUevent * e, unsigned flags))                               \
    X(cuEventDestroy, "cuEventDestroy_v2", (CUevent e))                                            \
    X(cuEventRecord, "cuEventRecord", (CUevent e, CUstream s))                                     \
    X(cuEventQuery, "cuEventQuery", (CUevent e))                                                   \
    X(cuEventSynchronize, "cuEventSynchronize", (CUevent e))                                       \
    X(cuEventElapsedTime, "cuEventElapsedTime_v2", (float *ms, CUevent a, CUevent b))              \
    X(cuMemAllocAsync, "cuMemAllocAsync", (CUdeviceptr * p, size_t n, CUstream s))                 \
    X(cuMemFreeAsync, "cuMemFreeAsync", (CUdeviceptr p, CUstream s))                               \
    X(cuMemAlloc, "cuMemAlloc_v2", (CUdeviceptr * p, size_t n))                                    \
    X(cuMemFree, "cuMemFree_v2", (CUdeviceptr p))                                                  \
    X(cuMemHostAlloc, "cuMemHostAlloc", (void **p, size_t n, unsigned flags))                      \
    X(cuMemFreeHost, "cuMemFreeHost", (void *p))                                                   \
    X(cuMemcpyAsync, "cuMemcpyAsync", (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s))    \
    X(cuMemsetD8Async, "cuMemsetD8Async", (CUdeviceptr p, unsigned char v, size_t n, CUstream s))  \
    X(cuModuleLoadData, "cuModuleLoadData", (CUmodule * m, const void *image))                     \
    X(cuModuleUnload, "cuModuleUnload", (CUmodule m))                                              \
    X(cuModuleGetFunction, "cuModuleGetFunction", (CUfunction * f, CUmodule m, const char *n))     \
    X(cuFuncSetAttribute, "cuFuncSetAttribute", (CUfunction f, int attr, int v))                   \
    X(cuLaunchKernel, "cuLaunchKernel",                                                            \
      (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, \
       unsigned shmem, CUstream s, void **params, void **extra))                                   \
    X(cuGraphCreate, "cuGraphCreate", (CUgraph * g, unsigned flags))                               \
    X(cuGraphDestroy, "cuGraphDestroy", (CUgraph g))                                               \
    X(cuGraphAddKernelNode, "cuGraphAddKernelNode_v2",                                             \
      (CUgraphNode * n, CUgraph g, const CUgraphNode *deps, size_t ndeps,                          \
       const CUDA_KERNEL_NODE_PARAMS_v2 *p))                                                       \
    X(cuGraphAddMemcpyNode, "cuGraphAddMemcpyNode",                                                \
      (CUgraphNode * n, CUgraph g, const CUgraphNode *deps, size_t ndeps, const CUDA_MEMCPY3D *p,  \
       CUcontext ctx))                                                                             \
    X(cuGraphInstantiate, "cuGraphInstantiateWithFlags",                                           \
      (CUgraphExec * e, CUgraph g, unsigned long long flags))                                      \
    X(cuGraphAddEmptyNode, "cuGraphAddEmptyNode",                                                  \
      (CUgraphNode * n, CUgraph g, const CUgraphNode *deps, size_t ndeps))                         \
    X(cuGraphLaunch, "cuGraphLaunch", (CUgraphExec e, CUstream s))                                 \
    X(cuGraphExecDestroy, "cuGraphExecDestroy", (CUgraphExec e))

typedef struct pg__cu {
#define PG__CU_FIELD(name, sym, params) CUresult(*name) params;
    PG__CU_FUNCS(PG__CU_FIELD)
#undef PG__CU_FIELD
} pg__cu;

/* The driver's entry points, loaded once per process; NULL with the error set if the driver
 * or one of its symbols is missing. */
const pg__cu *pg__cu_load(void);
/* "what: CUDA_ERROR_X (description)" into the error message; returns the pg_status to report. */
int pg__cu_error(const pg__cu *cu, CUresult r, const char *what);
/* cuInit failed with r in process `pid`; init_pid: the process that had initialised CUDA
 * through polygpu before (0: none). A fork() child inherits init_pid, not a usable CUDA: the
 * message says so and what to do. Returns the pg_status to report. */
int pg__cu_init_error(const pg__cu *cu, CUresult r, long init_pid, long pid);
/* 1 if r is a fault that CUDA keeps for the life of the context (an illegal address, a trap,
 * an assert, an uncorrectable ECC error...): every later call in that context fails with it. */
int pg__cu_sticky(CUresult r);
/* "CUDA_ERROR_X (description)" into out. */
void pg__cu_describe(const pg__cu *cu, CUresult r, char *out, size_t cap);

#endif
