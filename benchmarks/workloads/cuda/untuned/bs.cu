/* bs.cu: the B&S baseline, hand-written CUDA C. Per partition, on GPU p % N, one stream: copy the
 * prices in from pinned host memory, price them, copy the calls out to pinned host memory.
 * --sync: one GPU, synchronous copies, a device synchronisation after each kernel. */
#include "../common.h"

#include "../../kernels/bs.cu"

static const double R = 0.08, V = 0.3, T = 1.0, K = 60.0; /* as workloads/bs.py */

struct part_buffers {
    int gpu;
    double *s, *call;   /* device */
    double *hs, *hcall; /* pinned host */
    cudaStream_t stream;
};

int main(int argc, char **argv) {
    pgb_args a = pgb_parse(argc, argv, "bs");
    std::vector<pgb_part> parts = pgb_partitions(a.n, a.partitions);
    std::vector<part_buffers> pb(parts.size());

    for (size_t p = 0; p < parts.size(); p++) {
        part_buffers &b = pb[p];
        long long c = parts[p].count;
        size_t bytes = (size_t)c * sizeof(double);
        b.gpu = (int)(p % a.gpus);
        CK(cudaSetDevice(b.gpu));
        CK(cudaMalloc(&b.s, bytes));
        CK(cudaMalloc(&b.call, bytes));
        CK(cudaMallocHost(&b.hs, bytes));
        CK(cudaMallocHost(&b.hcall, bytes));
        CK(cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking));
        bs_init<<<grid_1d(c), BLOCK>>>(b.s, parts[p].offset, (int)c);
        CK_LAUNCH();
        CK(cudaMemcpy(b.hs, b.s, bytes, cudaMemcpyDeviceToHost));
    }

    auto run_async = [&]() {
        for (size_t p = 0; p < parts.size(); p++) {
            part_buffers &b = pb[p];
            int c = (int)parts[p].count;
            size_t bytes = (size_t)c * sizeof(double);
            CK(cudaSetDevice(b.gpu));
            CK(cudaMemcpyAsync(b.s, b.hs, bytes, cudaMemcpyHostToDevice, b.stream));
            bs<<<grid_1d(c), BLOCK, 0, b.stream>>>(b.call, b.s, c, R, V, T, K);
            CK_LAUNCH();
            CK(cudaMemcpyAsync(b.hcall, b.call, bytes, cudaMemcpyDeviceToHost, b.stream));
        }
        for (size_t p = 0; p < parts.size(); p++)
            CK(cudaStreamSynchronize(pb[p].stream));
    };
    auto run_sync = [&]() {
        CK(cudaSetDevice(0));
        for (size_t p = 0; p < parts.size(); p++) {
            part_buffers &b = pb[p];
            int c = (int)parts[p].count;
            size_t bytes = (size_t)c * sizeof(double);
            CK(cudaMemcpy(b.s, b.hs, bytes, cudaMemcpyHostToDevice));
            bs<<<grid_1d(c), BLOCK>>>(b.call, b.s, c, R, V, T, K);
            CK_LAUNCH();
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(b.hcall, b.call, bytes, cudaMemcpyDeviceToHost));
        }
    };
    std::vector<double> t = a.sync ? pgb_time_runs(a, run_sync) : pgb_time_runs(a, run_async);

    long long s = parts[0].count;
    pgb_write_sample(a, a.n, [&](long long i) { return pb[i / s].hcall[i % s]; });
    pgb_print_json("bs", a, t);
    for (part_buffers &b : pb) {
        CK(cudaSetDevice(b.gpu));
        CK(cudaFree(b.s));
        CK(cudaFree(b.call));
        CK(cudaFreeHost(b.hs));
        CK(cudaFreeHost(b.hcall));
        CK(cudaStreamDestroy(b.stream));
    }
    return 0;
}
