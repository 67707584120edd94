// proact_micro.cu: PROACT's microbenchmark, hand-written — the mechanism issue "Arrays in pieces"
// asks polygpu to apply by itself, measured on the GPU it will run on. A producer kernel writes
// `bytes` (thread block b writes chunk b / blocks_per_chunk) with compute time about equal to
// the copy time of its output to the consumer (the host with 1 GPU, a peer GPU with 2), so the
// ideal overlap is 2x. Versions:
//   bulk     : the kernel, then one copy of the whole output after it (copy-after-kernel)
//   chunked  : each block's epilogue counts its chunk's finished blocks; the last one fences
//              (system scope) and sets the chunk's flag; a copy stream waits on each flag with
//              cuStreamWaitValue32 and copies that chunk while the kernel still runs
//   compute  : the kernel alone, without and with the epilogue (the epilogue's own cost)
//   copy     : the copy alone
// For each chunk size of the sweep (4 KiB .. the whole output) it prints a CSV row, and the
// size a link model picks (per-copy overhead and bandwidth measured here: the smallest chunk
// whose copy time is at least 8 x the per-copy overhead), so the three regions — initiation
// bound, overlapped, tail bound — and the model's pick can be compared with the best measured.
// Usage: proact_micro [gpus=1|2] [MiB=256] [reps=5]
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));    \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)
#define CD(x)                                                                                      \
    do {                                                                                           \
        CUresult r_ = (x);                                                                         \
        if (r_ != CUDA_SUCCESS) {                                                                  \
            const char *s_ = "?";                                                                  \
            cuGetErrorString(r_, &s_);                                                             \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_);                         \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

// Each block fills its share of y with values computed by `work` multiply-adds per element.
__device__ void produce(float *y, size_t per_block, int work) {
    size_t base = (size_t)blockIdx.x * per_block;
    for (size_t i = threadIdx.x; i < per_block; i += blockDim.x) {
        float v = (float)(base + i);
        for (int k = 0; k < work; k++)
            v = v * 0.999f + 0.5f;
        y[base + i] = v;
    }
}

__global__ void producer(float *y, size_t per_block, int work) {
    produce(y, per_block, work);
}

// The epilogue: the last block of a chunk releases it. Counters are zeroed before each launch;
// flags carry the launch's epoch so they need no reset.
__global__ void producer_chunked(float *y, size_t per_block, int work, unsigned *count,
                                 unsigned *flag, unsigned blocks_per_chunk, unsigned epoch) {
    produce(y, per_block, work);
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence_system(); // this block's writes before the count
        unsigned c = blockIdx.x / blocks_per_chunk;
        unsigned left = gridDim.x - c * blocks_per_chunk;
        unsigned in_chunk = blocks_per_chunk < left ? blocks_per_chunk : left;
        if (atomicAdd(&count[c], 1u) + 1 == in_chunk) {
            __threadfence_system();
            atomicExch(&flag[c], epoch);
        }
    }
}

static double ms_between(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    return ms;
}

int main(int argc, char **argv) {
    int gpus = argc > 1 ? atoi(argv[1]) : 1;
    size_t bytes = (size_t)(argc > 2 ? atoi(argv[2]) : 256) << 20;
    int reps = argc > 3 ? atoi(argv[3]) : 5;
    const int threads = 256;
    const size_t per_block = 1024; // 4 KiB per block: the smallest chunk of the sweep
    size_t n = bytes / sizeof(float);
    const unsigned blocks = (unsigned)(n / per_block);
    CD(cuInit(0));
    CK(cudaSetDevice(0));
    float *y, *dst;
    // PM_POOL=1: both buffers from the devices' default memory pools (stream-ordered
    // allocations, as polygpu's arrays are), the peer given access to them.
    const char *pool = getenv("PM_POOL");
    int use_pool = pool && *pool == '1';
    auto alloc_on = [&](int dev, float **p) {
        CK(cudaSetDevice(dev));
        if (!use_pool) {
            CK(cudaMalloc(p, bytes));
            return;
        }
        CK(cudaMallocAsync((void **)p, bytes, 0));
        CK(cudaDeviceSynchronize());
        if (gpus == 2) {
            cudaMemPool_t mp;
            CK(cudaDeviceGetDefaultMemPool(&mp, dev));
            cudaMemAccessDesc d = {};
            d.location.type = cudaMemLocationTypeDevice;
            d.location.id = 1 - dev;
            d.flags = cudaMemAccessFlagsProtReadWrite;
            CK(cudaMemPoolSetAccess(mp, &d, 1));
        }
    };
    alloc_on(0, &y);
    if (use_pool)
        printf("# buffers from the default memory pools (PM_POOL=1)\n");
    if (gpus == 2) {
        alloc_on(1, &dst);
        CK(cudaSetDevice(0));
        int can = 0;
        CK(cudaDeviceCanAccessPeer(&can, 0, 1));
        if (can)
            CK(cudaDeviceEnablePeerAccess(1, 0));
    } else {
        CK(cudaMallocHost(&dst, bytes));
    }
    unsigned *count, *flag;
    CK(cudaMalloc(&count, blocks * sizeof(unsigned)));
    CK(cudaMalloc(&flag, blocks * sizeof(unsigned)));
    CK(cudaMemset(flag, 0, blocks * sizeof(unsigned)));
    cudaStream_t ks, cs;
    CK(cudaStreamCreateWithFlags(&ks, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
    cudaEvent_t e0, e1, e2;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventCreate(&e2));
    auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    // The copy alone, and its per-copy overhead (a 4 KiB copy).
    auto time_copy = [&](size_t len) {
        std::vector<double> t;
        for (int r = 0; r < reps; r++) {
            CK(cudaEventRecord(e0, cs));
            CK(cudaMemcpyAsync(dst, y, len, cudaMemcpyDefault, cs));
            CK(cudaEventRecord(e1, cs));
            CK(cudaEventSynchronize(e1));
            t.push_back(ms_between(e0, e1));
        }
        return median(t);
    };
    double t_copy = time_copy(bytes), t_small = time_copy(4096);
    double gbps = bytes / (t_copy - t_small) / 1e6;
    // Calibrate the work so that the kernel takes about as long as the copy.
    int work = 1;
    for (int it = 0; it < 20; it++) {
        CK(cudaEventRecord(e0, ks));
        producer<<<blocks, threads, 0, ks>>>(y, per_block, work);
        CK(cudaEventRecord(e1, ks));
        CK(cudaEventSynchronize(e1));
        double t = ms_between(e0, e1);
        if (t > 0.95 * t_copy && t < 1.05 * t_copy)
            break;
        work = std::max(1, (int)(work * t_copy / t));
    }
    unsigned epoch = 0;
    auto run = [&](int mode, size_t chunk) { // 0 bulk, 1 chunked, 2 compute, 3 compute+epilogue
        unsigned bpc = (unsigned)std::max<size_t>(1, chunk / (per_block * sizeof(float)));
        unsigned nchunks = (blocks + bpc - 1) / bpc;
        std::vector<double> t;
        for (int r = 0; r < reps; r++) {
            ++epoch;
            CK(cudaMemsetAsync(count, 0, nchunks * sizeof(unsigned), ks));
            CK(cudaStreamSynchronize(ks));
            CK(cudaEventRecord(e0, ks));
            CK(cudaStreamWaitEvent(cs, e0, 0));
            if (mode == 0 || mode == 2)
                producer<<<blocks, threads, 0, ks>>>(y, per_block, work);
            else
                producer_chunked<<<blocks, threads, 0, ks>>>(y, per_block, work, count, flag, bpc,
                                                            epoch);
            if (mode == 0) {
                CK(cudaEventRecord(e2, ks));
                CK(cudaStreamWaitEvent(cs, e2, 0));
                CK(cudaMemcpyAsync(dst, y, bytes, cudaMemcpyDefault, cs));
            } else if (mode == 1) {
                size_t cbytes = (size_t)bpc * per_block * sizeof(float);
                for (unsigned c = 0; c < nchunks; c++) {
                    CD(cuStreamWaitValue32((CUstream)cs, (CUdeviceptr)(flag + c), epoch,
                                           CU_STREAM_WAIT_VALUE_GEQ));
                    size_t off = (size_t)c * cbytes, len = std::min(cbytes, bytes - off);
                    CK(cudaMemcpyAsync((char *)dst + off, (char *)y + off, len,
                                       cudaMemcpyDefault, cs));
                }
            }
            if (mode <= 1) {
                CK(cudaEventRecord(e2, cs));
                CK(cudaStreamWaitEvent(ks, e2, 0));
            }
            CK(cudaEventRecord(e1, ks));
            CK(cudaEventSynchronize(e1));
            t.push_back(ms_between(e0, e1));
        }
        return median(t);
    };
    double t_kernel = run(2, bytes), t_bulk = run(0, bytes);
    printf("# gpus=%d bytes=%zu consumer=%s copy %.3f ms (%.1f GB/s, per-copy overhead %.1f us) "
           "kernel %.3f ms bulk %.3f ms\n",
           gpus, bytes, gpus == 2 ? "peer GPU" : "host", t_copy, gbps, t_small * 1e3, t_kernel,
           t_bulk);
    // The model's chunk: the copy of a chunk at least 8 x the per-copy overhead.
    size_t model = 4096;
    while (model < bytes && model / gbps / 1e6 < 8 * t_small)
        model *= 2;
    printf("version,gpus,chunk_bytes,ms,speedup_vs_bulk,copy_hidden,epilogue_slowdown\n");
    double best = 1e30;
    size_t best_chunk = 0;
    for (size_t chunk = 4096; chunk <= bytes; chunk *= 4) {
        double t = run(1, chunk), te = run(3, chunk);
        double hidden = 1.0 - (t - t_kernel) / t_copy;
        printf("chunked,%d,%zu,%.4f,%.3f,%.3f,%.3f\n", gpus, chunk, t, t_bulk / t, hidden,
               te / t_kernel - 1.0);
        if (t < best) {
            best = t;
            best_chunk = chunk;
        }
    }
    double tm = run(1, model);
    printf("# best chunk %zu: %.3f ms (%.2fx bulk); model's chunk %zu: %.3f ms (%.2fx bulk, "
           "%.1f%% from the best)\n",
           best_chunk, best, t_bulk / best, model, tm, t_bulk / tm, 100.0 * (tm / best - 1.0));
    return 0;
}
