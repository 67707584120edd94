/* cg.cu: the CG baseline, hand-written CUDA C. Partition p's rows of A stay on GPU p % N; x, r, p,
 * y and the scalars live on GPU 0, which also keeps a copy of p on every other GPU.
 *
 * Iteration, with no host synchronisation: each partition stream waits for the event "p is
 * everywhere", zeroes its part of A p, multiplies, and copies it (peer copy) into y on GPU 0,
 * then records "part done"; GPU 0's main stream waits for every part, runs dot, update_xr,
 * update_p and rotate, copies p to the other GPUs (peer copies) and records "p is everywhere".
 * --sync: one GPU, synchronous copies, a device synchronisation after each kernel. */
#include "../common.h"

#include "../../kernels/cg.cu"

struct part_buffers {
    int gpu;
    float *a, *yp; /* device: rows of A (column-major), this partition's part of A p */
    cudaStream_t stream;
    cudaEvent_t done;
};

int main(int argc, char **argv) {
    pgb_args a = pgb_parse(argc, argv, "cg");
    long long n = a.n;
    size_t vbytes = (size_t)n * sizeof(float);
    float diag = (float)(0.8 * sqrt((double)n)); /* as workloads/cg.py */
    std::vector<pgb_part> parts = pgb_partitions(n, a.partitions);
    std::vector<part_buffers> pb(parts.size());
    std::vector<float *> pcopy(a.gpus); /* p on each GPU (GPU 0: p itself) */
    pgb_enable_peers(a.gpus);

    CK(cudaSetDevice(0));
    float *x, *r, *p, *y, *b, *scalars, *hx;
    CK(cudaMalloc(&x, vbytes));
    CK(cudaMalloc(&r, vbytes));
    CK(cudaMalloc(&p, vbytes));
    CK(cudaMalloc(&y, vbytes));
    CK(cudaMalloc(&b, vbytes));
    CK(cudaMalloc(&scalars, 4 * sizeof(float)));
    CK(cudaMallocHost(&hx, vbytes));
    cudaStream_t main_stream;
    cudaEvent_t p_ready;
    CK(cudaStreamCreateWithFlags(&main_stream, cudaStreamNonBlocking));
    CK(cudaEventCreateWithFlags(&p_ready, cudaEventDisableTiming));
    cg_init_b<<<grid_1d(n), BLOCK>>>(b, (int)n);
    CK_LAUNCH();
    pcopy[0] = p;
    for (int g = 1; g < a.gpus; g++) {
        CK(cudaSetDevice(g));
        CK(cudaMalloc(&pcopy[g], vbytes));
    }
    for (size_t i = 0; i < parts.size(); i++) {
        part_buffers &pt = pb[i];
        long long rows = parts[i].count;
        pt.gpu = (int)(i % a.gpus);
        CK(cudaSetDevice(pt.gpu));
        CK(cudaMalloc(&pt.a, (size_t)(rows * n) * sizeof(float)));
        CK(cudaMalloc(&pt.yp, rows * sizeof(float)));
        CK(cudaStreamCreateWithFlags(&pt.stream, cudaStreamNonBlocking));
        CK(cudaEventCreateWithFlags(&pt.done, cudaEventDisableTiming));
        cg_init_matrix<<<grid_1d(rows * n), BLOCK>>>(pt.a, parts[i].offset, (int)rows, (int)n,
                                                     diag);
        CK_LAUNCH();
    }
    pgb_sync_all(a.gpus);

    const int ni = (int)n;
    /* p from GPU 0 to the others, then "p is everywhere" (main stream, GPU 0 current). */
    auto broadcast_p = [&]() {
        for (int g = 1; g < a.gpus; g++)
            CK(cudaMemcpyPeerAsync(pcopy[g], g, p, 0, vbytes, main_stream));
        CK(cudaEventRecord(p_ready, main_stream));
    };
    auto run_async = [&]() {
        CK(cudaSetDevice(0));
        cg_reset<<<grid_1d(n), BLOCK, 0, main_stream>>>(x, r, p, scalars, b, ni);
        CK_LAUNCH();
        cg_dot<<<grid_reduce(n), BLOCK, 0, main_stream>>>(scalars, r, r, ni, 0);
        CK_LAUNCH();
        broadcast_p();
        for (int it = 0; it < a.iterations; it++) {
            for (size_t i = 0; i < parts.size(); i++) {
                part_buffers &pt = pb[i];
                int rows = (int)parts[i].count, chunk;
                dim3 grid = matvec_geometry(rows, n, &chunk);
                CK(cudaSetDevice(pt.gpu));
                CK(cudaStreamWaitEvent(pt.stream, p_ready, 0));
                CK(cudaMemsetAsync(pt.yp, 0, rows * sizeof(float), pt.stream));
                linalg_matvec<<<grid, BLOCK, 0, pt.stream>>>(pt.yp, pt.a, pcopy[pt.gpu], rows, ni,
                                                             chunk);
                CK_LAUNCH();
                CK(cudaMemcpyPeerAsync(y + parts[i].offset, 0, pt.yp, pt.gpu, rows * sizeof(float),
                                       pt.stream));
                CK(cudaEventRecord(pt.done, pt.stream));
            }
            CK(cudaSetDevice(0));
            for (size_t i = 0; i < parts.size(); i++)
                CK(cudaStreamWaitEvent(main_stream, pb[i].done, 0));
            cg_dot<<<grid_reduce(n), BLOCK, 0, main_stream>>>(scalars, p, y, ni, 1);
            CK_LAUNCH();
            cg_update_xr<<<grid_reduce(n), BLOCK, 0, main_stream>>>(x, r, scalars, p, y, ni);
            CK_LAUNCH();
            cg_update_p<<<grid_1d(n), BLOCK, 0, main_stream>>>(p, r, scalars, ni);
            CK_LAUNCH();
            cg_rotate<<<1, 32, 0, main_stream>>>(scalars);
            CK_LAUNCH();
            broadcast_p();
        }
        CK(cudaMemcpyAsync(hx, x, vbytes, cudaMemcpyDeviceToHost, main_stream));
        CK(cudaStreamSynchronize(main_stream));
    };
    auto run_sync = [&]() {
        CK(cudaSetDevice(0));
        cg_reset<<<grid_1d(n), BLOCK>>>(x, r, p, scalars, b, ni);
        CK_LAUNCH();
        CK(cudaDeviceSynchronize());
        cg_dot<<<grid_reduce(n), BLOCK>>>(scalars, r, r, ni, 0);
        CK_LAUNCH();
        CK(cudaDeviceSynchronize());
        for (int it = 0; it < a.iterations; it++) {
            for (size_t i = 0; i < parts.size(); i++) {
                part_buffers &pt = pb[i];
                int rows = (int)parts[i].count, chunk;
                dim3 grid = matvec_geometry(rows, n, &chunk);
                CK(cudaMemset(pt.yp, 0, rows * sizeof(float)));
                linalg_matvec<<<grid, BLOCK>>>(pt.yp, pt.a, p, rows, ni, chunk);
                CK_LAUNCH();
                CK(cudaDeviceSynchronize());
                CK(cudaMemcpy(y + parts[i].offset, pt.yp, rows * sizeof(float),
                              cudaMemcpyDeviceToDevice));
            }
            cg_dot<<<grid_reduce(n), BLOCK>>>(scalars, p, y, ni, 1);
            CK_LAUNCH();
            CK(cudaDeviceSynchronize());
            cg_update_xr<<<grid_reduce(n), BLOCK>>>(x, r, scalars, p, y, ni);
            CK_LAUNCH();
            CK(cudaDeviceSynchronize());
            cg_update_p<<<grid_1d(n), BLOCK>>>(p, r, scalars, ni);
            CK_LAUNCH();
            CK(cudaDeviceSynchronize());
            cg_rotate<<<1, 32>>>(scalars);
            CK_LAUNCH();
            CK(cudaDeviceSynchronize());
        }
        CK(cudaMemcpy(hx, x, vbytes, cudaMemcpyDeviceToHost));
    };
    std::vector<double> t = a.sync ? pgb_time_runs(a, run_sync) : pgb_time_runs(a, run_async);

    pgb_write_sample(a, n, [&](long long i) { return (double)hx[i]; });
    pgb_print_json("cg", a, t);
    for (part_buffers &pt : pb) {
        CK(cudaSetDevice(pt.gpu));
        CK(cudaFree(pt.a));
        CK(cudaFree(pt.yp));
        CK(cudaStreamDestroy(pt.stream));
        CK(cudaEventDestroy(pt.done));
    }
    for (int g = 1; g < a.gpus; g++) {
        CK(cudaSetDevice(g));
        CK(cudaFree(pcopy[g]));
    }
    CK(cudaSetDevice(0));
    for (float *d : {x, r, p, y, b, scalars})
        CK(cudaFree(d));
    CK(cudaFreeHost(hx));
    CK(cudaStreamDestroy(main_stream));
    CK(cudaEventDestroy(p_ready));
    return 0;
}
