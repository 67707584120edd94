/* vec.cu: the VEC baseline, hand-written CUDA C. Per partition, on GPU p % N: two streams copy x
 * and y from pinned host memory and square them; an event lets the first stream wait for the
 * second before the reduction; the partition's sum comes back to pinned memory. --sync: one GPU,
 * synchronous copies, a device synchronisation after each kernel. */
#include "../common.h"

#include "../../kernels/vec.cu"

struct part_buffers {
    int gpu;
    float *x, *y, *x2, *y2; /* device */
    double *res;            /* device */
    float *hx, *hy;         /* pinned host: the inputs the paper rewrites before every run */
    double *hres;           /* pinned host */
    cudaStream_t sa, sb;
    cudaEvent_t squared;
};

int main(int argc, char **argv) {
    pgb_args a = pgb_parse(argc, argv, "vec");
    std::vector<pgb_part> parts = pgb_partitions(a.n, a.partitions);
    std::vector<part_buffers> pb(parts.size());
    pgb_enable_peers(a.gpus);

    for (size_t p = 0; p < parts.size(); p++) {
        part_buffers &b = pb[p];
        long long c = parts[p].count;
        size_t bytes = (size_t)c * sizeof(float);
        b.gpu = (int)(p % a.gpus);
        CK(cudaSetDevice(b.gpu));
        CK(cudaMalloc(&b.x, bytes));
        CK(cudaMalloc(&b.y, bytes));
        CK(cudaMalloc(&b.x2, bytes));
        CK(cudaMalloc(&b.y2, bytes));
        CK(cudaMalloc(&b.res, sizeof(double)));
        CK(cudaMallocHost(&b.hx, bytes));
        CK(cudaMallocHost(&b.hy, bytes));
        CK(cudaMallocHost(&b.hres, sizeof(double)));
        CK(cudaStreamCreateWithFlags(&b.sa, cudaStreamNonBlocking));
        CK(cudaStreamCreateWithFlags(&b.sb, cudaStreamNonBlocking));
        CK(cudaEventCreateWithFlags(&b.squared, cudaEventDisableTiming));
        /* The inputs are made on the device, as in every version, and kept on the host. */
        vec_init<<<grid_1d(c), BLOCK>>>(b.x, b.y, parts[p].offset, (int)c);
        CK_LAUNCH();
        CK(cudaMemcpy(b.hx, b.x, bytes, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(b.hy, b.y, bytes, cudaMemcpyDeviceToHost));
    }

    double total = 0.0;
    auto run_async = [&]() {
        for (size_t p = 0; p < parts.size(); p++) {
            part_buffers &b = pb[p];
            int c = (int)parts[p].count;
            size_t bytes = (size_t)c * sizeof(float);
            CK(cudaSetDevice(b.gpu));
            CK(cudaMemcpyAsync(b.x, b.hx, bytes, cudaMemcpyHostToDevice, b.sa));
            vec_square<<<grid_1d(c), BLOCK, 0, b.sa>>>(b.x2, b.x, c);
            CK_LAUNCH();
            CK(cudaMemcpyAsync(b.y, b.hy, bytes, cudaMemcpyHostToDevice, b.sb));
            vec_square<<<grid_1d(c), BLOCK, 0, b.sb>>>(b.y2, b.y, c);
            CK_LAUNCH();
            CK(cudaEventRecord(b.squared, b.sb));
            CK(cudaMemsetAsync(b.res, 0, sizeof(double), b.sa));
            CK(cudaStreamWaitEvent(b.sa, b.squared, 0));
            vec_reduce<<<grid_reduce(c), BLOCK, 0, b.sa>>>(b.res, b.x2, b.y2, c);
            CK_LAUNCH();
            CK(cudaMemcpyAsync(b.hres, b.res, sizeof(double), cudaMemcpyDeviceToHost, b.sa));
        }
        total = 0.0;
        for (size_t p = 0; p < parts.size(); p++) {
            CK(cudaStreamSynchronize(pb[p].sa));
            total += *pb[p].hres;
        }
    };
    auto run_sync = [&]() {
        CK(cudaSetDevice(0));
        total = 0.0;
        for (size_t p = 0; p < parts.size(); p++) {
            part_buffers &b = pb[p];
            int c = (int)parts[p].count;
            size_t bytes = (size_t)c * sizeof(float);
            CK(cudaMemcpy(b.x, b.hx, bytes, cudaMemcpyHostToDevice));
            vec_square<<<grid_1d(c), BLOCK>>>(b.x2, b.x, c);
            CK_LAUNCH();
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(b.y, b.hy, bytes, cudaMemcpyHostToDevice));
            vec_square<<<grid_1d(c), BLOCK>>>(b.y2, b.y, c);
            CK_LAUNCH();
            CK(cudaDeviceSynchronize());
            CK(cudaMemset(b.res, 0, sizeof(double)));
            vec_reduce<<<grid_reduce(c), BLOCK>>>(b.res, b.x2, b.y2, c);
            CK_LAUNCH();
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(b.hres, b.res, sizeof(double), cudaMemcpyDeviceToHost));
            total += *b.hres;
        }
    };
    std::vector<double> t = a.sync ? pgb_time_runs(a, run_sync) : pgb_time_runs(a, run_async);

    pgb_write_sample(a, 1, [&](long long) { return total; });
    pgb_print_json("vec", a, t);
    for (part_buffers &b : pb) {
        CK(cudaSetDevice(b.gpu));
        CK(cudaFree(b.x));
        CK(cudaFree(b.y));
        CK(cudaFree(b.x2));
        CK(cudaFree(b.y2));
        CK(cudaFree(b.res));
        CK(cudaFreeHost(b.hx));
        CK(cudaFreeHost(b.hy));
        CK(cudaFreeHost(b.hres));
        CK(cudaStreamDestroy(b.sa));
        CK(cudaStreamDestroy(b.sb));
        CK(cudaEventDestroy(b.squared));
    }
    return 0;
}
