/* vec.cu: the VEC baseline, hand-written CUDA C, tuned. Partitions are placed contiguously; each
 * GPU has one host-to-device copy stream and PGB_COMPUTE_STREAMS compute streams. The copy stream
 * brings x and y of each partition in turn from pinned host memory (an event after each); the
 * partition's compute stream waits for x, squares it, waits for y, squares it, reduces the
 * difference and copies the sum back to pinned memory. Copies thus run back to back on the copy
 * engine while earlier partitions compute. --sync: one GPU, synchronous copies, a device
 * synchronisation after each kernel. The first version is untuned/vec.cu. */
#include "common.h"

#include "../kernels/vec.cu"

struct part_buffers {
    int gpu, stream;
    float *x, *y, *x2, *y2; /* device */
    double *res;            /* device */
    float *hx, *hy;         /* pinned host: the inputs the paper rewrites before every run */
    double *hres;           /* pinned host */
    cudaEvent_t x_in, y_in;
};

struct gpu_streams {
    cudaStream_t copy_in, compute[PGB_COMPUTE_STREAMS];
};

int main(int argc, char **argv) {
    pgb_args a = pgb_parse(argc, argv, "vec");
    std::vector<pgb_part> parts = pgb_partitions(a.n, a.partitions);
    std::vector<part_buffers> pb(parts.size());
    std::vector<gpu_streams> gs(a.gpus);
    std::vector<int> on_gpu(a.gpus, 0);

    for (int g = 0; g < a.gpus; g++) {
        CK(cudaSetDevice(g));
        CK(cudaStreamCreateWithFlags(&gs[g].copy_in, cudaStreamNonBlocking));
        for (cudaStream_t &s : gs[g].compute)
            CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    }
    for (size_t p = 0; p < parts.size(); p++) {
        part_buffers &b = pb[p];
        long long c = parts[p].count;
        size_t bytes = (size_t)c * sizeof(float);
        b.gpu = pgb_gpu_of((int)p, (int)parts.size(), a.gpus);
        b.stream = on_gpu[b.gpu]++ % PGB_COMPUTE_STREAMS;
        CK(cudaSetDevice(b.gpu));
        CK(cudaMalloc(&b.x, bytes));
        CK(cudaMalloc(&b.y, bytes));
        CK(cudaMalloc(&b.x2, bytes));
        CK(cudaMalloc(&b.y2, bytes));
        CK(cudaMalloc(&b.res, sizeof(double)));
        CK(cudaMallocHost(&b.hx, bytes));
        CK(cudaMallocHost(&b.hy, bytes));
        CK(cudaMallocHost(&b.hres, sizeof(double)));
        CK(cudaEventCreateWithFlags(&b.x_in, cudaEventDisableTiming));
        CK(cudaEventCreateWithFlags(&b.y_in, cudaEventDisableTiming));
        /* The inputs are made on the device, as in every version, and kept on the host. */
        vec_init<<<grid_1d(c), BLOCK>>>(b.x, b.y, parts[p].offset, (int)c);
        CK_LAUNCH();
        CK(cudaMemcpy(b.hx, b.x, bytes, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(b.hy, b.y, bytes, cudaMemcpyDeviceToHost));
    }

    double total = 0.0;
    const std::vector<int> order = pgb_issue_order((int)parts.size(), a.gpus);
    auto run_async = [&]() {
        for (int p : order) {
            part_buffers &b = pb[p];
            int c = (int)parts[p].count;
            size_t bytes = (size_t)c * sizeof(float);
            cudaStream_t in = gs[b.gpu].copy_in, s = gs[b.gpu].compute[b.stream];
            CK(cudaSetDevice(b.gpu));
            CK(cudaMemcpyAsync(b.x, b.hx, bytes, cudaMemcpyHostToDevice, in));
            CK(cudaEventRecord(b.x_in, in));
            CK(cudaMemcpyAsync(b.y, b.hy, bytes, cudaMemcpyHostToDevice, in));
            CK(cudaEventRecord(b.y_in, in));
            CK(cudaStreamWaitEvent(s, b.x_in, 0));
            vec_square<<<grid_1d(c), BLOCK, 0, s>>>(b.x2, b.x, c);
            CK_LAUNCH();
            CK(cudaStreamWaitEvent(s, b.y_in, 0));
            vec_square<<<grid_1d(c), BLOCK, 0, s>>>(b.y2, b.y, c);
            CK_LAUNCH();
            CK(cudaMemsetAsync(b.res, 0, sizeof(double), s));
            vec_reduce<<<grid_reduce(c), BLOCK, 0, s>>>(b.res, b.x2, b.y2, c);
            CK_LAUNCH();
            CK(cudaMemcpyAsync(b.hres, b.res, sizeof(double), cudaMemcpyDeviceToHost, s));
        }
        for (int g = 0; g < a.gpus; g++)
            for (cudaStream_t s : gs[g].compute)
                CK(cudaStreamSynchronize(s));
        total = 0.0;
        for (size_t p = 0; p < parts.size(); p++)
            total += *pb[p].hres;
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
        for (void *d : {(void *)b.x, (void *)b.y, (void *)b.x2, (void *)b.y2, (void *)b.res})
            CK(cudaFree(d));
        for (void *h : {(void *)b.hx, (void *)b.hy, (void *)b.hres})
            CK(cudaFreeHost(h));
        CK(cudaEventDestroy(b.x_in));
        CK(cudaEventDestroy(b.y_in));
    }
    for (int g = 0; g < a.gpus; g++) {
        CK(cudaSetDevice(g));
        CK(cudaStreamDestroy(gs[g].copy_in));
        for (cudaStream_t s : gs[g].compute)
            CK(cudaStreamDestroy(s));
    }
    return 0;
}
