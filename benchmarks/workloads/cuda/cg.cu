/* cg.cu: the CG baseline, hand-written CUDA C, tuned. Partitions are placed contiguously, so GPU g
 * holds one block of rows [row0_g, row1_g); x, r, p, y and the scalars live on GPU 0, which sends
 * p to each other GPU once per iteration and receives one block of y from each.
 *
 * Iteration: each GPU's first stream waits for "p is everywhere"; the GPU's partitions are spread
 * over up to PGB_COMPUTE_STREAMS streams (one partition's product does not fill a GPU), each
 * zeroes its rows of the GPU's block of A p and multiplies into them (on GPU 0 straight into y);
 * the first stream joins the others, copies the block into y on GPU 0 (one peer copy) and
 * records "block done"; GPU 0's main stream waits for every block, runs dot and
 * update_xr (after the last, x goes to the host on a side stream while update_p runs), update_p
 * and rotate, then copies p to the other GPUs and records "p is everywhere".
 *
 * By default a run is captured once as a CUDA graph (every GPU's work, with the events as graph
 * edges) and each run launches it: the ~30 launches per iteration cost one graph launch.
 * --no-graph issues the same work on the streams every run ("cuda-streams" in the results).
 * --sync: one GPU, synchronous copies, a device synchronisation after each kernel. The first
 * version is untuned/cg.cu. */
#include "common.h"

#include "../kernels/cg.cu"

struct gpu_buffers {
    long long row0, rows; /* this GPU's block of rows */
    float *a;             /* its rows of A, partition after partition (each column-major) */
    float *yb;            /* its block of A p (GPU 0: y + row0 itself) */
    float *p;             /* p on this GPU (GPU 0: p itself) */
    int nstreams;         /* streams used: min(PGB_COMPUTE_STREAMS, its partitions) */
    cudaStream_t stream[PGB_COMPUTE_STREAMS];
    cudaEvent_t forked, joined[PGB_COMPUTE_STREAMS], done;
};

int main(int argc, char **argv) {
    pgb_args a = pgb_parse(argc, argv, "cg");
    long long n = a.n;
    size_t vbytes = (size_t)n * sizeof(float);
    float diag = (float)(0.8 * sqrt((double)n)); /* as workloads/cg.py */
    std::vector<pgb_part> parts = pgb_partitions(n, a.partitions);
    std::vector<int> gpu_of(parts.size());
    std::vector<gpu_buffers> gb(a.gpus);
    std::vector<float *> part_a(parts.size());
    pgb_enable_peers(a.gpus);

    std::vector<int> stream_of(parts.size());
    for (int g = 0; g < a.gpus; g++)
        gb[g].row0 = -1, gb[g].rows = 0, gb[g].nstreams = 0;
    for (size_t i = 0; i < parts.size(); i++) {
        int g = gpu_of[i] = pgb_gpu_of((int)i, (int)parts.size(), a.gpus);
        if (gb[g].row0 < 0)
            gb[g].row0 = parts[i].offset;
        gb[g].rows += parts[i].count;
        stream_of[i] = gb[g].nstreams++ % PGB_COMPUTE_STREAMS;
    }
    for (int g = 0; g < a.gpus; g++)
        gb[g].nstreams = (int)pgb_min(gb[g].nstreams, PGB_COMPUTE_STREAMS);

    CK(cudaSetDevice(0));
    float *x, *r, *p, *y, *b, *scalars, *hx;
    CK(cudaMalloc(&x, vbytes));
    CK(cudaMalloc(&r, vbytes));
    CK(cudaMalloc(&p, vbytes));
    CK(cudaMalloc(&y, vbytes));
    CK(cudaMalloc(&b, vbytes));
    CK(cudaMalloc(&scalars, 4 * sizeof(float)));
    CK(cudaMallocHost(&hx, vbytes));
    cudaStream_t main_stream, out_stream;
    cudaEvent_t p_ready, x_ready, x_out;
    CK(cudaStreamCreateWithFlags(&main_stream, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&out_stream, cudaStreamNonBlocking));
    CK(cudaEventCreateWithFlags(&p_ready, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&x_ready, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&x_out, cudaEventDisableTiming));
    cg_init_b<<<grid_1d(n), BLOCK>>>(b, (int)n);
    CK_LAUNCH();
    for (int g = 0; g < a.gpus; g++) {
        gpu_buffers &G = gb[g];
        CK(cudaSetDevice(g));
        CK(cudaMalloc(&G.a, (size_t)(G.rows * n) * sizeof(float)));
        if (g == 0) {
            G.yb = y + G.row0;
            G.p = p;
        } else {
            CK(cudaMalloc(&G.yb, G.rows * sizeof(float)));
            CK(cudaMalloc(&G.p, vbytes));
        }
        for (int k = 0; k < G.nstreams; k++) {
            CK(cudaStreamCreateWithFlags(&G.stream[k], cudaStreamNonBlocking));
            CK(cudaEventCreateWithFlags(&G.joined[k], cudaEventDisableTiming));
        }
        CK(cudaEventCreateWithFlags(&G.forked, cudaEventDisableTiming));
        CK(cudaEventCreateWithFlags(&G.done, cudaEventDisableTiming));
    }
    for (size_t i = 0; i < parts.size(); i++) {
        gpu_buffers &G = gb[gpu_of[i]];
        long long rows = parts[i].count;
        part_a[i] = G.a + (parts[i].offset - G.row0) * n;
        CK(cudaSetDevice(gpu_of[i]));
        cg_init_matrix<<<grid_1d(rows * n), BLOCK>>>(part_a[i], parts[i].offset, (int)rows, (int)n,
                                                     diag);
        CK_LAUNCH();
    }
    pgb_sync_all(a.gpus);

    const int ni = (int)n;
    /* p from GPU 0 to the others, then "p is everywhere" (main stream, GPU 0 current). Peer copies
     * are plain cudaMemcpyAsync on unified addresses (peer access is on), which stream capture
     * records as graph nodes. */
    auto broadcast_p = [&]() {
        for (int g = 1; g < a.gpus; g++)
            CK(cudaMemcpyAsync(gb[g].p, p, vbytes, cudaMemcpyDefault, main_stream));
        CK(cudaEventRecord(p_ready, main_stream));
    };
    /* One run on the streams, ending with x on its way to the host (main_stream joins it). */
    auto issue_run = [&]() {
        CK(cudaSetDevice(0));
        cg_reset<<<grid_1d(n), BLOCK, 0, main_stream>>>(x, r, p, scalars, b, ni);
        CK_LAUNCH();
        cg_dot<<<grid_reduce(n), BLOCK, 0, main_stream>>>(scalars, r, r, ni, 0);
        CK_LAUNCH();
        broadcast_p();
        for (int it = 0; it < a.iterations; it++) {
            for (int g = 0; g < a.gpus; g++) {
                gpu_buffers &G = gb[g];
                CK(cudaSetDevice(g));
                CK(cudaStreamWaitEvent(G.stream[0], p_ready, 0));
                CK(cudaEventRecord(G.forked, G.stream[0]));
                for (int k = 1; k < G.nstreams; k++)
                    CK(cudaStreamWaitEvent(G.stream[k], G.forked, 0));
                for (size_t i = 0; i < parts.size(); i++) {
                    if (gpu_of[i] != g)
                        continue;
                    int rows = (int)parts[i].count, chunk;
                    dim3 grid = matvec_geometry(rows, n, &chunk);
                    cudaStream_t s = G.stream[stream_of[i]];
                    float *yi = G.yb + (parts[i].offset - G.row0);
                    CK(cudaMemsetAsync(yi, 0, rows * sizeof(float), s));
                    linalg_matvec<<<grid, BLOCK, 0, s>>>(yi, part_a[i], G.p, rows, ni, chunk);
                    CK_LAUNCH();
                }
                for (int k = 1; k < G.nstreams; k++) {
                    CK(cudaEventRecord(G.joined[k], G.stream[k]));
                    CK(cudaStreamWaitEvent(G.stream[0], G.joined[k], 0));
                }
                if (g != 0)
                    CK(cudaMemcpyAsync(y + G.row0, G.yb, G.rows * sizeof(float),
                                       cudaMemcpyDefault, G.stream[0]));
                CK(cudaEventRecord(G.done, G.stream[0]));
            }
            CK(cudaSetDevice(0));
            for (int g = 0; g < a.gpus; g++)
                CK(cudaStreamWaitEvent(main_stream, gb[g].done, 0));
            cg_dot<<<grid_reduce(n), BLOCK, 0, main_stream>>>(scalars, p, y, ni, 1);
            CK_LAUNCH();
            cg_update_xr<<<grid_reduce(n), BLOCK, 0, main_stream>>>(x, r, scalars, p, y, ni);
            CK_LAUNCH();
            if (it == a.iterations - 1) { /* x is final: send it while p is updated */
                CK(cudaEventRecord(x_ready, main_stream));
                CK(cudaStreamWaitEvent(out_stream, x_ready, 0));
                CK(cudaMemcpyAsync(hx, x, vbytes, cudaMemcpyDeviceToHost, out_stream));
                CK(cudaEventRecord(x_out, out_stream));
            }
            cg_update_p<<<grid_1d(n), BLOCK, 0, main_stream>>>(p, r, scalars, ni);
            CK_LAUNCH();
            cg_rotate<<<1, 32, 0, main_stream>>>(scalars);
            CK_LAUNCH();
            if (it < a.iterations - 1)
                broadcast_p();
        }
        if (a.iterations == 0)
            CK(cudaMemcpyAsync(hx, x, vbytes, cudaMemcpyDeviceToHost, main_stream));
        else
            CK(cudaStreamWaitEvent(main_stream, x_out, 0));
    };
    cudaGraphExec_t exec = 0;
    if (!a.sync && a.graph) {
        cudaGraph_t graph;
        CK(cudaSetDevice(0));
        CK(cudaStreamBeginCapture(main_stream, cudaStreamCaptureModeGlobal));
        issue_run();
        CK(cudaSetDevice(0));
        CK(cudaStreamEndCapture(main_stream, &graph));
        CK(cudaGraphInstantiate(&exec, graph, 0));
        CK(cudaGraphDestroy(graph));
    }
    auto run_async = [&]() {
        CK(cudaSetDevice(0));
        if (exec)
            CK(cudaGraphLaunch(exec, main_stream));
        else
            issue_run();
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
                int rows = (int)parts[i].count, chunk;
                dim3 grid = matvec_geometry(rows, n, &chunk);
                CK(cudaMemset(y + parts[i].offset, 0, rows * sizeof(float)));
                linalg_matvec<<<grid, BLOCK>>>(y + parts[i].offset, part_a[i], p, rows, ni, chunk);
                CK_LAUNCH();
                CK(cudaDeviceSynchronize());
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
    if (exec)
        CK(cudaGraphExecDestroy(exec));
    for (int g = 0; g < a.gpus; g++) {
        gpu_buffers &G = gb[g];
        CK(cudaSetDevice(g));
        CK(cudaFree(G.a));
        if (g != 0) {
            CK(cudaFree(G.yb));
            CK(cudaFree(G.p));
        }
        for (int k = 0; k < G.nstreams; k++) {
            CK(cudaStreamDestroy(G.stream[k]));
            CK(cudaEventDestroy(G.joined[k]));
        }
        CK(cudaEventDestroy(G.forked));
        CK(cudaEventDestroy(G.done));
    }
    CK(cudaSetDevice(0));
    for (float *d : {x, r, p, y, b, scalars})
        CK(cudaFree(d));
    CK(cudaFreeHost(hx));
    CK(cudaStreamDestroy(main_stream));
    CK(cudaStreamDestroy(out_stream));
    for (cudaEvent_t e : {p_ready, x_ready, x_out})
        CK(cudaEventDestroy(e));
    return 0;
}
