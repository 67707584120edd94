/* bs.cu: the B&S baseline, hand-written CUDA C, tuned. Partitions (the paper's independent
 * vectors) are placed contiguously; each GPU has a host-to-device copy stream, a device-to-host
 * copy stream and PGB_COMPUTE_STREAMS compute streams: the prices of each partition come in on
 * the first (event), are priced on the partition's compute stream (event) and go out on the
 * second, so both copy directions and the kernels overlap. --sync: one GPU, synchronous copies,
 * a device synchronisation after each kernel. The first version is untuned/bs.cu. */
#include "common.h"

#include "../kernels/bs.cu"

static const double R = 0.08, V = 0.3, T = 1.0, K = 60.0; /* as workloads/bs.py */

struct part_buffers {
    int gpu, stream;
    double *s, *call;   /* device */
    double *hs, *hcall; /* pinned host */
    cudaEvent_t in, priced;
};

struct gpu_streams {
    cudaStream_t copy_in, copy_out, compute[PGB_COMPUTE_STREAMS];
};

int main(int argc, char **argv) {
    pgb_args a = pgb_parse(argc, argv, "bs");
    std::vector<pgb_part> parts = pgb_partitions(a.n, a.partitions);
    std::vector<part_buffers> pb(parts.size());
    std::vector<gpu_streams> gs(a.gpus);
    std::vector<int> on_gpu(a.gpus, 0);

    for (int g = 0; g < a.gpus; g++) {
        CK(cudaSetDevice(g));
        CK(cudaStreamCreateWithFlags(&gs[g].copy_in, cudaStreamNonBlocking));
        CK(cudaStreamCreateWithFlags(&gs[g].copy_out, cudaStreamNonBlocking));
        for (cudaStream_t &s : gs[g].compute)
            CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    }
    for (size_t p = 0; p < parts.size(); p++) {
        part_buffers &b = pb[p];
        long long c = parts[p].count;
        size_t bytes = (size_t)c * sizeof(double);
        b.gpu = pgb_gpu_of((int)p, (int)parts.size(), a.gpus);
        b.stream = on_gpu[b.gpu]++ % PGB_COMPUTE_STREAMS;
        CK(cudaSetDevice(b.gpu));
        CK(cudaMalloc(&b.s, bytes));
        CK(cudaMalloc(&b.call, bytes));
        CK(cudaMallocHost(&b.hs, bytes));
        CK(cudaMallocHost(&b.hcall, bytes));
        CK(cudaEventCreateWithFlags(&b.in, cudaEventDisableTiming));
        CK(cudaEventCreateWithFlags(&b.priced, cudaEventDisableTiming));
        bs_init<<<grid_1d(c), BLOCK>>>(b.s, parts[p].offset, (int)c);
        CK_LAUNCH();
        CK(cudaMemcpy(b.hs, b.s, bytes, cudaMemcpyDeviceToHost));
    }

    const std::vector<int> order = pgb_issue_order((int)parts.size(), a.gpus);
    auto run_async = [&]() {
        for (int p : order) {
            part_buffers &b = pb[p];
            int c = (int)parts[p].count;
            size_t bytes = (size_t)c * sizeof(double);
            gpu_streams &g = gs[b.gpu];
            cudaStream_t s = g.compute[b.stream];
            CK(cudaSetDevice(b.gpu));
            CK(cudaMemcpyAsync(b.s, b.hs, bytes, cudaMemcpyHostToDevice, g.copy_in));
            CK(cudaEventRecord(b.in, g.copy_in));
            CK(cudaStreamWaitEvent(s, b.in, 0));
            bs<<<grid_1d(c), BLOCK, 0, s>>>(b.call, b.s, c, R, V, T, K);
            CK_LAUNCH();
            CK(cudaEventRecord(b.priced, s));
            CK(cudaStreamWaitEvent(g.copy_out, b.priced, 0));
            CK(cudaMemcpyAsync(b.hcall, b.call, bytes, cudaMemcpyDeviceToHost, g.copy_out));
        }
        for (int g = 0; g < a.gpus; g++)
            CK(cudaStreamSynchronize(gs[g].copy_out));
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
        CK(cudaEventDestroy(b.in));
        CK(cudaEventDestroy(b.priced));
    }
    for (int g = 0; g < a.gpus; g++) {
        CK(cudaSetDevice(g));
        CK(cudaStreamDestroy(gs[g].copy_in));
        CK(cudaStreamDestroy(gs[g].copy_out));
        for (cudaStream_t s : gs[g].compute)
            CK(cudaStreamDestroy(s));
    }
    return 0;
}
