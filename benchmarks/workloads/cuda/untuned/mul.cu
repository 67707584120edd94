/* mul.cu: the MUL baseline, hand-written CUDA C. The vector goes from pinned host memory to every
 * GPU on its own stream; per partition, on GPU p % N, one stream copies the partition's rows in,
 * waits for the vector (event), zeroes and computes its part of z and copies it out to pinned
 * host memory. --sync: one GPU, synchronous copies, a synchronisation after each kernel. */
#include "../common.h"

#include "../../kernels/mul.cu"

struct part_buffers {
    int gpu;
    float *a, *z; /* device */
    float *ha;    /* pinned host: the partition's rows, column-major (see linalg.cuh) */
    cudaStream_t stream;
};

struct gpu_buffers {
    float *v;
    cudaStream_t stream;
    cudaEvent_t ready;
};

int main(int argc, char **argv) {
    pgb_args a = pgb_parse(argc, argv, "mul");
    long long n = a.n;
    std::vector<pgb_part> parts = pgb_partitions(n, a.partitions);
    std::vector<part_buffers> pb(parts.size());
    std::vector<gpu_buffers> gb(a.gpus);
    float *hv, *hz;
    CK(cudaMallocHost(&hv, n * sizeof(float)));
    CK(cudaMallocHost(&hz, n * sizeof(float)));

    for (int g = 0; g < a.gpus; g++) {
        CK(cudaSetDevice(g));
        CK(cudaMalloc(&gb[g].v, n * sizeof(float)));
        CK(cudaStreamCreateWithFlags(&gb[g].stream, cudaStreamNonBlocking));
        CK(cudaEventCreateWithFlags(&gb[g].ready, cudaEventDisableTiming));
    }
    CK(cudaSetDevice(0));
    mul_init_vector<<<grid_1d(n), BLOCK>>>(gb[0].v, (int)n);
    CK_LAUNCH();
    CK(cudaMemcpy(hv, gb[0].v, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (size_t p = 0; p < parts.size(); p++) {
        part_buffers &b = pb[p];
        long long rows = parts[p].count;
        size_t bytes = (size_t)(rows * n) * sizeof(float);
        b.gpu = (int)(p % a.gpus);
        CK(cudaSetDevice(b.gpu));
        CK(cudaMalloc(&b.a, bytes));
        CK(cudaMalloc(&b.z, rows * sizeof(float)));
        CK(cudaMallocHost(&b.ha, bytes));
        CK(cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking));
        mul_init_matrix<<<grid_1d(rows * n), BLOCK>>>(b.a, parts[p].offset, (int)rows, (int)n);
        CK_LAUNCH();
        CK(cudaMemcpy(b.ha, b.a, bytes, cudaMemcpyDeviceToHost));
    }

    auto run_async = [&]() {
        for (int g = 0; g < a.gpus; g++) {
            CK(cudaSetDevice(g));
            CK(cudaMemcpyAsync(gb[g].v, hv, n * sizeof(float), cudaMemcpyHostToDevice,
                               gb[g].stream));
            CK(cudaEventRecord(gb[g].ready, gb[g].stream));
        }
        for (size_t p = 0; p < parts.size(); p++) {
            part_buffers &b = pb[p];
            long long rows = parts[p].count;
            int chunk;
            dim3 grid = matvec_geometry(rows, n, &chunk);
            CK(cudaSetDevice(b.gpu));
            CK(cudaMemcpyAsync(b.a, b.ha, (size_t)(rows * n) * sizeof(float),
                               cudaMemcpyHostToDevice, b.stream));
            CK(cudaMemsetAsync(b.z, 0, rows * sizeof(float), b.stream));
            CK(cudaStreamWaitEvent(b.stream, gb[b.gpu].ready, 0));
            linalg_matvec<<<grid, BLOCK, 0, b.stream>>>(b.z, b.a, gb[b.gpu].v, (int)rows, (int)n,
                                                        chunk);
            CK_LAUNCH();
            CK(cudaMemcpyAsync(hz + parts[p].offset, b.z, rows * sizeof(float),
                               cudaMemcpyDeviceToHost, b.stream));
        }
        for (size_t p = 0; p < parts.size(); p++)
            CK(cudaStreamSynchronize(pb[p].stream));
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
        CK(cudaStreamDestroy(b.stream));
    }
    for (int g = 0; g < a.gpus; g++) {
        CK(cudaSetDevice(g));
        CK(cudaFree(gb[g].v));
        CK(cudaStreamDestroy(gb[g].stream));
        CK(cudaEventDestroy(gb[g].ready));
    }
    CK(cudaFreeHost(hv));
    CK(cudaFreeHost(hz));
    return 0;
}
