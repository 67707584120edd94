/* mul.cu: the MUL baseline, hand-written CUDA C, tuned. Partitions are placed contiguously; each
 * GPU has one host-to-device copy stream, which brings the vector and then each partition's rows
 * from pinned host memory (an event after each), and PGB_COMPUTE_STREAMS compute streams: the
 * partition's stream waits for its rows, zeroes and computes its part of z and copies it out to
 * pinned host memory. One copy stream keeps the copy engine busy back to back instead of
 * splitting it between a stream per partition. --sync: one GPU, synchronous copies, a
 * synchronisation after each kernel. The first version is untuned/mul.cu. */
#include "common.h"

#include "../kernels/mul.cu"

struct part_buffers {
    int gpu, stream;
    float *a, *z; /* device */
    float *ha;    /* pinned host: the partition's rows, column-major (see linalg.cuh) */
    cudaEvent_t in;
};

struct gpu_buffers {
    float *v;
    cudaStream_t copy_in, compute[PGB_COMPUTE_STREAMS];
};

int main(int argc, char **argv) {
    pgb_args a = pgb_parse(argc, argv, "mul");
    long long n = a.n;
    std::vector<pgb_part> parts = pgb_partitions(n, a.partitions);
    std::vector<part_buffers> pb(parts.size());
    std::vector<gpu_buffers> gb(a.gpus);
    std::vector<int> on_gpu(a.gpus, 0);
    float *hv, *hz;
    CK(cudaMallocHost(&hv, n * sizeof(float)));
    CK(cudaMallocHost(&hz, n * sizeof(float)));

    for (int g = 0; g < a.gpus; g++) {
        CK(cudaSetDevice(g));
        CK(cudaMalloc(&gb[g].v, n * sizeof(float)));
        CK(cudaStreamCreateWithFlags(&gb[g].copy_in, cudaStreamNonBlocking));
        for (cudaStream_t &s : gb[g].compute)
            CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    }
    CK(cudaSetDevice(0));
    mul_init_vector<<<grid_1d(n), BLOCK>>>(gb[0].v, (int)n);
    CK_LAUNCH();
    CK(cudaMemcpy(hv, gb[0].v, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (size_t p = 0; p < parts.size(); p++) {
        part_buffers &b = pb[p];
        long long rows = parts[p].count;
        size_t bytes = (size_t)(rows * n) * sizeof(float);
        b.gpu = pgb_gpu_of((int)p, (int)parts.size(), a.gpus);
        b.stream = on_gpu[b.gpu]++ % PGB_COMPUTE_STREAMS;
        CK(cudaSetDevice(b.gpu));
        CK(cudaMalloc(&b.a, bytes));
        CK(cudaMalloc(&b.z, rows * sizeof(float)));
        CK(cudaMallocHost(&b.ha, bytes));
        CK(cudaEventCreateWithFlags(&b.in, cudaEventDisableTiming));
        mul_init_matrix<<<grid_1d(rows * n), BLOCK>>>(b.a, parts[p].offset, (int)rows, (int)n);
        CK_LAUNCH();
        CK(cudaMemcpy(b.ha, b.a, bytes, cudaMemcpyDeviceToHost));
    }

    const std::vector<int> order = pgb_issue_order((int)parts.size(), a.gpus);
    auto run_async = [&]() {
        for (int g = 0; g < a.gpus; g++) {
            CK(cudaSetDevice(g));
            CK(cudaMemcpyAsync(gb[g].v, hv, n * sizeof(float), cudaMemcpyHostToDevice,
                               gb[g].copy_in));
        }
        for (int p : order) {
            part_buffers &b = pb[p];
            long long rows = parts[p].count;
            int chunk;
            dim3 grid = matvec_geometry(rows, n, &chunk);
            cudaStream_t s = gb[b.gpu].compute[b.stream];
            CK(cudaSetDevice(b.gpu));
            /* The copy stream brought the vector first, so "rows in" implies "vector in". */
            CK(cudaMemcpyAsync(b.a, b.ha, (size_t)(rows * n) * sizeof(float),
                               cudaMemcpyHostToDevice, gb[b.gpu].copy_in));
            CK(cudaEventRecord(b.in, gb[b.gpu].copy_in));
            CK(cudaMemsetAsync(b.z, 0, rows * sizeof(float), s));
            CK(cudaStreamWaitEvent(s, b.in, 0));
            linalg_matvec<<<grid, BLOCK, 0, s>>>(b.z, b.a, gb[b.gpu].v, (int)rows, (int)n, chunk);
            CK_LAUNCH();
            CK(cudaMemcpyAsync(hz + parts[p].offset, b.z, rows * sizeof(float),
                               cudaMemcpyDeviceToHost, s));
        }
        for (int g = 0; g < a.gpus; g++)
            for (cudaStream_t s : gb[g].compute)
                CK(cudaStreamSynchronize(s));
    };
    auto run_sync = [&]() {
        CK(cudaSetDevice(0));
        CK(cudaMemcpy(gb[0].v, hv, n * sizeof(float), cudaMemcpyHostToDevice));
        for (size_t p = 0; p < parts.size(); p++) {
            part_buffers &b = pb[p];
            long long rows = parts[p].count;
            int chunk;
            dim3 grid = matvec_geometry(rows, n, &chunk);
            CK(cudaMemcpy(b.a, b.ha, (size_t)(rows * n) * sizeof(float), cudaMemcpyHostToDevice));
            CK(cudaMemset(b.z, 0, rows * sizeof(float)));
            linalg_matvec<<<grid, BLOCK>>>(b.z, b.a, gb[0].v, (int)rows, (int)n, chunk);
            CK_LAUNCH();
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(hz + parts[p].offset, b.z, rows * sizeof(float), cudaMemcpyDeviceToHost));
        }
    };
    std::vector<double> t = a.sync ? pgb_time_runs(a, run_sync) : pgb_time_runs(a, run_async);

    pgb_write_sample(a, n, [&](long long i) { return (double)hz[i]; });
    pgb_print_json("mul", a, t);
    for (part_buffers &b : pb) {
        CK(cudaSetDevice(b.gpu));
        CK(cudaFree(b.a));
        CK(cudaFree(b.z));
        CK(cudaFreeHost(b.ha));
        CK(cudaEventDestroy(b.in));
    }
    for (int g = 0; g < a.gpus; g++) {
        CK(cudaSetDevice(g));
        CK(cudaFree(gb[g].v));
        CK(cudaStreamDestroy(gb[g].copy_in));
        for (cudaStream_t s : gb[g].compute)
            CK(cudaStreamDestroy(s));
    }
    CK(cudaFreeHost(hv));
    CK(cudaFreeHost(hz));
    return 0;
}
