/* jacobi.cu: the JACOBI baseline, hand-written CUDA C, tuned. Partitions are placed contiguously,
 * so GPU g holds one block of rows [row0_g, row0_g + rows_g) of both grids, with a ghost row
 * above and below it (local row 0 is global row row0_g - 1); only the rows on each side of a
 * boundary between GPUs move, by peer copies into the neighbour's ghost rows.
 *
 * A GPU's partitions are spread over up to PGB_COMPUTE_STREAMS streams in contiguous blocks.
 * Sweep t of partition i waits only for what it reads: the sweep t - 1 of its neighbours i - 1
 * and i + 1 (an event, when one is on another stream of the same GPU), or, when a neighbour is
 * on another GPU, the peer copy of that neighbour's boundary row into this GPU's ghost row. After
 * sweep t of a partition whose neighbour is on another GPU, its boundary row goes there at once
 * on one of two copy streams of its GPU (rows going up, rows going down). Every wait also covers
 * the write-after-read hazards of the two grids (a sweep overwrites rows that neighbours, or a
 * copy, read two sweeps before: those finished before the neighbour's result this sweep waits
 * for). Events come in two sets, by parity of the sweep, so that a wait never sees a newer
 * record. A run: each GPU initialises its rows and its ghost rows (no copy), the sweeps, the
 * residual kernels, and one copy of each GPU's block sums to pinned host memory; the host adds
 * them up.
 *
 * By default a run is captured once as a CUDA graph and each run launches it (as CG's);
 * --no-graph issues the same work on the streams every run ("cuda-streams"). --sync: one GPU,
 * synchronous copies, a device synchronisation after every kernel. */
#include "common.h"

#include "../kernels/jacobi.cu"

struct gpu_buffers {
    long long row0, rows; /* this GPU's block of rows */
    int first, last;      /* its partitions first .. last (none when first > last) */
    float *grid[2];       /* (rows + 2) x n each: the block with a ghost row above and below */
    double *partial;      /* 256 block sums per partition */
    int nstreams;
    cudaStream_t stream[PGB_COMPUTE_STREAMS], up, down;
    cudaEvent_t joined[PGB_COMPUTE_STREAMS + 2], done;
};

/* JACOBI's checked rows (workloads/jacobi.py check_rows): the two first and last rows and both
 * sides of every boundary between 16 equal blocks of rows. */
static std::vector<long long> check_rows(long long n) {
    long long s = n / 16;
    std::vector<long long> rows = {0, 1};
    for (long long k = 1; k < 16; k++) {
        rows.push_back(k * s - 1);
        rows.push_back(k * s);
    }
    rows.push_back(n - 2);
    rows.push_back(n - 1);
    return rows;
}

/* The launch geometry of workloads/common.py stencil_geometry. */
static inline dim3 stencil_geometry(long long rows, long long n) {
    return dim3((unsigned)pgb_cdiv(n, BLOCK), (unsigned)pgb_max(1, pgb_min(rows, 65535)), 1);
}

int main(int argc, char **argv) {
    pgb_args a = pgb_parse(argc, argv, "jacobi");
    long long n = a.n;
    const int ni = (int)n, sweeps = a.iterations;
    if (n % 16 || n < 64 || sweeps < 2 || sweeps % 2) {
        fprintf(stderr, "jacobi: n must be a multiple of 16 (at least 64) and the number of "
                        "iterations even\n");
        return 1;
    }
    std::vector<pgb_part> parts = pgb_partitions(n, a.partitions);
    const int np = (int)parts.size();
    std::vector<int> gpu_of(np), stream_of(np), local_of(np);
    std::vector<gpu_buffers> gb(a.gpus);
    for (int g = 0; g < a.gpus; g++) {
        gb[g].row0 = 0;
        gb[g].rows = 0;
        gb[g].first = np;
        gb[g].last = -1;
        gb[g].nstreams = 0;
    }
    for (int i = 0; i < np; i++) {
        int g = gpu_of[i] = pgb_gpu_of(i, np, a.gpus);
        if (gb[g].first > i) {
            gb[g].first = i;
            gb[g].row0 = parts[i].offset;
        }
        gb[g].last = i;
        gb[g].rows += parts[i].count;
        local_of[i] = i - gb[g].first;
    }
    for (int g = 0; g < a.gpus; g++) {
        int count = gb[g].last - gb[g].first + 1;
        gb[g].nstreams = (int)pgb_max(1, pgb_min(PGB_COMPUTE_STREAMS, count));
        for (int i = gb[g].first; i <= gb[g].last; i++) /* contiguous blocks of partitions */
            stream_of[i] = (int)((long long)(i - gb[g].first) * gb[g].nstreams / count);
    }
    pgb_enable_peers(a.gpus);

    /* Per partition, by parity of the sweep (the init counts as sweep -1, parity 1): its sweep
     * is done (recorded on its GPU); the row above it, from another GPU, is in its GPU's ghost
     * row (recorded by the GPU above, so made there); the row below it likewise. */
    std::vector<cudaEvent_t> done(2 * np), from_above(2 * np), from_below(2 * np);
    auto make_events = [&](std::vector<cudaEvent_t> &ev, int i, int gpu) {
        CK(cudaSetDevice(gpu));
        for (int k = 0; k < 2; k++)
            CK(cudaEventCreateWithFlags(&ev[2 * i + k], cudaEventDisableTiming));
    };
    for (int i = 0; i < np; i++) {
        make_events(done, i, gpu_of[i]);
        make_events(from_above, i, gpu_of[i > 0 ? i - 1 : i]);
        make_events(from_below, i, gpu_of[i + 1 < np ? i + 1 : i]);
    }
    for (int g = 0; g < a.gpus; g++) {
        gpu_buffers &G = gb[g];
        CK(cudaSetDevice(g));
        size_t bytes = (size_t)((G.rows + 2) * n) * sizeof(float);
        for (int k = 0; k < 2; k++) {
            CK(cudaMalloc(&G.grid[k], bytes));
            CK(cudaMemset(G.grid[k], 0, bytes));
        }
        CK(cudaMalloc(&G.partial, (size_t)pgb_max(1, G.last - G.first + 1) * 256 * sizeof(double)));
        for (int k = 0; k < PGB_COMPUTE_STREAMS; k++)
            CK(cudaStreamCreateWithFlags(&G.stream[k], cudaStreamNonBlocking));
        CK(cudaStreamCreateWithFlags(&G.up, cudaStreamNonBlocking));
        CK(cudaStreamCreateWithFlags(&G.down, cudaStreamNonBlocking));
        for (int k = 0; k < PGB_COMPUTE_STREAMS + 2; k++)
            CK(cudaEventCreateWithFlags(&G.joined[k], cudaEventDisableTiming));
        CK(cudaEventCreateWithFlags(&G.done, cudaEventDisableTiming));
    }
    double *hpartial;
    CK(cudaMallocHost(&hpartial, (size_t)np * 256 * sizeof(double)));
    CK(cudaSetDevice(0));
    cudaStream_t main_stream;
    cudaEvent_t start;
    CK(cudaStreamCreateWithFlags(&main_stream, cudaStreamNonBlocking));
    CK(cudaEventCreateWithFlags(&start, cudaEventDisableTiming));

    /* Global row r of grid k on GPU g (r within its block or ghost rows). */
    auto row_ptr = [&](int g, int k, long long r) {
        return gb[g].grid[k] + (r - gb[g].row0 + 1) * n;
    };
    auto sweep_partition = [&](int i, int t, cudaStream_t s) {
        int g = gpu_of[i];
        long long lo = parts[i].offset, rows = parts[i].count, first = lo > 0 ? lo - 1 : 0;
        jacobi_sweep<<<stencil_geometry(rows, n), BLOCK, 0, s>>>(
            row_ptr(g, (t + 1) % 2, lo), row_ptr(g, t % 2, first), (int)lo, (int)rows, (int)first,
            ni);
        CK_LAUNCH();
    };
    auto residual_partition = [&](int i, cudaStream_t s) {
        int g = gpu_of[i];
        long long lo = parts[i].offset, count = parts[i].count * n;
        /* sweeps is even: the result is in grid 0, the sweep before in grid 1 */
        jacobi_residual<<<grid_reduce(count), BLOCK, 0, s>>>(
            gb[g].partial + (size_t)local_of[i] * 256, row_ptr(g, 0, lo), row_ptr(g, 1, lo),
            count);
        CK_LAUNCH();
    };
    /* GPU g's own rows of grid 0 and its ghost rows: the start values, made in place (no copy).
     * async: each partition's rows on its stream, then done[.][1] (sweep -1) recorded; the ghost
     * rows on the streams of the partitions that read them (the first and the last). Else all
     * on the legacy default stream (--sync). */
    auto init_gpu = [&](int g, bool async) {
        gpu_buffers &G = gb[g];
        if (G.first > G.last)
            return;
        cudaStream_t top = async ? G.stream[stream_of[G.first]] : 0;
        cudaStream_t bottom = async ? G.stream[stream_of[G.last]] : 0;
        if (G.row0 > 0) {
            jacobi_init<<<stencil_geometry(1, n), BLOCK, 0, top>>>(row_ptr(g, 0, G.row0 - 1),
                                                                  (int)(G.row0 - 1), 1, ni);
            CK_LAUNCH();
        }
        if (G.row0 + G.rows < n) {
            jacobi_init<<<stencil_geometry(1, n), BLOCK, 0, bottom>>>(
                row_ptr(g, 0, G.row0 + G.rows), (int)(G.row0 + G.rows), 1, ni);
            CK_LAUNCH();
        }
        for (int i = G.first; i <= G.last; i++) {
            cudaStream_t s = async ? G.stream[stream_of[i]] : 0;
            jacobi_init<<<stencil_geometry(parts[i].count, n), BLOCK, 0, s>>>(
                row_ptr(g, 0, parts[i].offset), (int)parts[i].offset, (int)parts[i].count, ni);
            CK_LAUNCH();
            if (async)
                CK(cudaEventRecord(done[2 * i + 1], s));
        }
    };
    std::vector<int> order = pgb_issue_order(np, a.gpus);

    /* One run on the streams, ending with main_stream joined to every stream. */
    auto issue_run = [&]() {
        CK(cudaSetDevice(0));
        CK(cudaEventRecord(start, main_stream));
        for (int g = 0; g < a.gpus; g++) {
            gpu_buffers &G = gb[g];
            CK(cudaSetDevice(g));
            for (int k = 0; k < PGB_COMPUTE_STREAMS; k++)
                CK(cudaStreamWaitEvent(G.stream[k], start, 0));
            CK(cudaStreamWaitEvent(G.up, start, 0));
            CK(cudaStreamWaitEvent(G.down, start, 0));
            init_gpu(g, true);
        }
        for (int t = 0; t < sweeps; t++) {
            int cur = t % 2, prev = (t + 1) % 2;
            for (int i : order) {
                int g = gpu_of[i];
                gpu_buffers &G = gb[g];
                cudaStream_t s = G.stream[stream_of[i]];
                CK(cudaSetDevice(g));
                /* the neighbours' previous sweep (t = 0: their init) on other streams; from
                 * other GPUs their boundary row in the ghost row (t = 0: made here) */
                for (int j = i - 1; j <= i + 1; j += 2) {
                    if (j < 0 || j >= np)
                        continue;
                    if (gpu_of[j] != g) {
                        if (t > 0)
                            CK(cudaStreamWaitEvent(
                                s, j < i ? from_above[2 * i + prev] : from_below[2 * i + prev], 0));
                    } else if (stream_of[j] != stream_of[i]) {
                        CK(cudaStreamWaitEvent(s, done[2 * j + prev], 0));
                    }
                }
                sweep_partition(i, t, s);
                CK(cudaEventRecord(done[2 * i + cur], s));
                if (t == sweeps - 1)
                    continue; /* no halo after the last sweep */
                long long lo = parts[i].offset, hi = lo + parts[i].count;
                int nxt = (t + 1) % 2;
                if (i > 0 && gpu_of[i - 1] != g) { /* my first row up into the neighbour's ghost */
                    CK(cudaStreamWaitEvent(G.up, done[2 * i + cur], 0));
                    CK(cudaMemcpyAsync(row_ptr(gpu_of[i - 1], nxt, lo), row_ptr(g, nxt, lo),
                                       n * sizeof(float), cudaMemcpyDefault, G.up));
                    CK(cudaEventRecord(from_below[2 * (i - 1) + cur], G.up));
                }
                if (i + 1 < np && gpu_of[i + 1] != g) { /* my last row down */
                    CK(cudaStreamWaitEvent(G.down, done[2 * i + cur], 0));
                    CK(cudaMemcpyAsync(row_ptr(gpu_of[i + 1], nxt, hi - 1), row_ptr(g, nxt, hi - 1),
                                       n * sizeof(float), cudaMemcpyDefault, G.down));
                    CK(cudaEventRecord(from_above[2 * (i + 1) + cur], G.down));
                }
            }
        }
        for (int g = 0; g < a.gpus; g++) {
            gpu_buffers &G = gb[g];
            CK(cudaSetDevice(g));
            for (int i = G.first; i <= G.last; i++)
                residual_partition(i, G.stream[stream_of[i]]);
            for (int k = 1; k < PGB_COMPUTE_STREAMS + 2; k++) {
                cudaStream_t s = k < PGB_COMPUTE_STREAMS ? G.stream[k]
                                 : k == PGB_COMPUTE_STREAMS ? G.up : G.down;
                CK(cudaEventRecord(G.joined[k], s));
                CK(cudaStreamWaitEvent(G.stream[0], G.joined[k], 0));
            }
            if (G.first <= G.last)
                CK(cudaMemcpyAsync(hpartial + (size_t)G.first * 256, G.partial,
                                   (size_t)(G.last - G.first + 1) * 256 * sizeof(double),
                                   cudaMemcpyDeviceToHost, G.stream[0]));
            CK(cudaEventRecord(G.done, G.stream[0]));
        }
        CK(cudaSetDevice(0));
        for (int g = 0; g < a.gpus; g++)
            CK(cudaStreamWaitEvent(main_stream, gb[g].done, 0));
    };

    cudaGraphExec_t exec = 0;
    double residual = 0.0;
    auto finish = [&]() {
        residual = 0.0;
        for (long long k = 0; k < (long long)np * 256; k++)
            residual += hpartial[k];
    };
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
        finish();
    };
    auto run_sync = [&]() {
        CK(cudaSetDevice(0));
        init_gpu(0, false);
        CK(cudaDeviceSynchronize());
        for (int t = 0; t < sweeps; t++)
            for (int i = 0; i < np; i++) {
                sweep_partition(i, t, 0);
                CK(cudaDeviceSynchronize());
            }
        for (int i = 0; i < np; i++) {
            residual_partition(i, 0);
            CK(cudaDeviceSynchronize());
        }
        CK(cudaMemcpy(hpartial, gb[0].partial, (size_t)np * 256 * sizeof(double),
                      cudaMemcpyDeviceToHost));
        finish();
    };
    std::vector<double> t = a.sync ? pgb_time_runs(a, run_sync) : pgb_time_runs(a, run_async);

    /* The checked rows of the result (grid 0), each from the GPU that holds it. */
    std::vector<long long> rows = check_rows(n);
    std::vector<float> hrows(rows.size() * (size_t)n);
    for (size_t k = 0; k < rows.size(); k++) {
        int g = 0;
        for (int h = 0; h < a.gpus; h++)
            if (gb[h].first <= gb[h].last && rows[k] >= gb[h].row0 &&
                rows[k] < gb[h].row0 + gb[h].rows)
                g = h;
        CK(cudaSetDevice(g));
        CK(cudaMemcpy(&hrows[k * n], row_ptr(g, 0, rows[k]), n * sizeof(float),
                      cudaMemcpyDeviceToHost));
    }
    long long total = (long long)rows.size() * n;
    pgb_write_sample(a, total + 1, [&](long long i) {
        return i < total ? (double)hrows[(size_t)i] : residual;
    });
    pgb_print_json("jacobi", a, t);

    if (exec)
        CK(cudaGraphExecDestroy(exec));
    for (int i = 0; i < 2 * np; i++) {
        CK(cudaEventDestroy(done[i]));
        CK(cudaEventDestroy(from_above[i]));
        CK(cudaEventDestroy(from_below[i]));
    }
    for (int g = 0; g < a.gpus; g++) {
        gpu_buffers &G = gb[g];
        CK(cudaSetDevice(g));
        CK(cudaFree(G.grid[0]));
        CK(cudaFree(G.grid[1]));
        CK(cudaFree(G.partial));
        for (int k = 0; k < PGB_COMPUTE_STREAMS; k++)
            CK(cudaStreamDestroy(G.stream[k]));
        CK(cudaStreamDestroy(G.up));
        CK(cudaStreamDestroy(G.down));
        for (int k = 0; k < PGB_COMPUTE_STREAMS + 2; k++)
            CK(cudaEventDestroy(G.joined[k]));
        CK(cudaEventDestroy(G.done));
    }
    CK(cudaSetDevice(0));
    CK(cudaFreeHost(hpartial));
    CK(cudaStreamDestroy(main_stream));
    CK(cudaEventDestroy(start));
    return 0;
}
