/* cg_mpi.cu: the hand-written MPI + CUDA C baseline of cg_dist.py: the same CG (cg.py's matrix,
 * b, sizes and iterations; kernels/cg.cu and kernels/cg_dist.cu, the very kernels polygpu runs),
 * one GPU per rank (by local rank), each rank owning one block of rows of the matrix and of x, r,
 * p, y (the rows of cg_dist.py's partitions on that rank, as one partition).
 *
 * Per iteration: the product starts at once on the columns of the rank's own rows of p (compute
 * stream) while the rank's piece of p goes to the host (pinned), to every other rank (MPI
 * point-to-point) and the others' pieces back to the GPU (copy stream); then the product over the
 * other columns; the partial p.Ap, alpha, the x/r update and partial r.r, beta, the p update, with
 * the partial dot products exchanged between ranks through pinned host memory (one float per
 * rank, summed in rank order by the kernels). A run: the reset, the iterations, and every rank
 * gathering x (as cg_dist.py's host read). Rank 0 prints the JSON line and with --sample writes
 * x (float64) for check_sample.py. */
#include "mpi_common.h"

#include "../workloads/kernels/cg.cu"
#include "../workloads/kernels/cg_dist.cu"

int main(int argc, char **argv) {
    int rank, size;
    char device[320];
    pgm_args a = pgm_start(&argc, &argv, 4096, 25, &rank, &size, device, sizeof device);
    const long long n = a.n;
    std::vector<pgb_part> parts = pgb_partitions(n, size);
    if ((int)parts.size() != size) {
        if (rank == 0)
            fprintf(stderr, "cg_mpi: n = %lld too small for %d ranks\n", n, size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    std::vector<int> counts(size), displs(size), ones(size, 1), idx(size);
    for (int k = 0; k < size; k++) {
        counts[k] = (int)parts[k].count;
        displs[k] = (int)parts[k].offset;
        idx[k] = k;
    }
    const long long row0 = parts[rank].offset;
    const int rows = (int)parts[rank].count;
    float diag = (float)(0.8 * sqrt((double)n));

    float *A, *p, *x, *r, *y, *pap, *rr_a, *rr_b, *mine;
    CK(cudaMalloc(&A, sizeof(float) * rows * n));
    CK(cudaMalloc(&p, sizeof(float) * n)); /* the whole p: this rank's rows at row0 */
    CK(cudaMalloc(&x, sizeof(float) * rows));
    CK(cudaMalloc(&r, sizeof(float) * rows));
    CK(cudaMalloc(&y, sizeof(float) * rows));
    CK(cudaMalloc(&pap, sizeof(float) * size)); /* every rank's partial, by rank */
    CK(cudaMalloc(&rr_a, sizeof(float) * size));
    CK(cudaMalloc(&rr_b, sizeof(float) * size));
    CK(cudaMalloc(&mine, sizeof(float) * 4)); /* this rank's partials before the exchange */
    float *h_p, *h_x, *h_s;
    CK(cudaMallocHost(&h_p, sizeof(float) * n));
    CK(cudaMallocHost(&h_x, sizeof(float) * n));
    CK(cudaMallocHost(&h_s, sizeof(float) * size));
    cudaStream_t sc, sx;
    CK(cudaStreamCreateWithFlags(&sc, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&sx, cudaStreamNonBlocking));
    cudaEvent_t ev_p, ev_in;
    CK(cudaEventCreateWithFlags(&ev_p, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&ev_in, cudaEventDisableTiming));

    cg_init_matrix<<<grid_1d((long long)rows * n), BLOCK, 0, sc>>>(A, row0, rows, (int)n, diag);
    CK_LAUNCH();
    CK(cudaStreamSynchronize(sc));

    /* The matrix columns [c0, c1) of this block (column-major: contiguous). */
    auto matvec = [&](long long c0, long long c1) {
        if (c1 <= c0)
            return;
        int chunk;
        dim3 g = matvec_geometry(rows, c1 - c0, &chunk);
        linalg_matvec<<<g, BLOCK, 0, sc>>>(y, A + c0 * rows, p + c0, rows, (int)(c1 - c0), chunk);
        CK_LAUNCH();
    };
    /* A partial (one float on the device, `src`) to every rank: into `dst` (size floats). */
    auto exchange = [&](const float *src, float *dst, int tag) {
        CK(cudaMemcpyAsync(h_s + rank, src, sizeof(float), cudaMemcpyDeviceToHost, sc));
        CK(cudaStreamSynchronize(sc));
        pgm_allgather(h_s, ones.data(), idx.data(), MPI_FLOAT, tag);
        CK(cudaMemcpyAsync(dst, h_s, sizeof(float) * size, cudaMemcpyHostToDevice, sc));
    };
    long long bytes_sent = 0;
    auto run = [&]() {
        cg_dist_reset<<<1, BLOCK, 0, sc>>>(x, r, p + row0, mine, row0, rows);
        CK_LAUNCH();
        exchange(mine, rr_a, 1);
        for (int k = 0; k < a.iterations; k++) {
            float *rr = k % 2 ? rr_b : rr_a, *rrn = k % 2 ? rr_a : rr_b;
            /* p's pieces: this rank's out (copy stream, after the last update of p). */
            CK(cudaEventRecord(ev_p, sc));
            CK(cudaStreamWaitEvent(sx, ev_p, 0));
            CK(cudaMemcpyAsync(h_p + row0, p + row0, sizeof(float) * rows, cudaMemcpyDeviceToHost,
                               sx));
            linalg_zero<<<grid_1d(rows), BLOCK, 0, sc>>>(y, rows);
            CK_LAUNCH();
            matvec(row0, row0 + rows); /* own columns meanwhile */
            CK(cudaStreamSynchronize(sx));
            pgm_allgather(h_p, counts.data(), displs.data(), MPI_FLOAT, 2);
            bytes_sent += (long long)(size - 1) * rows * 4;
            if (row0 > 0)
                CK(cudaMemcpyAsync(p, h_p, sizeof(float) * row0, cudaMemcpyHostToDevice, sx));
            if (row0 + rows < n)
                CK(cudaMemcpyAsync(p + row0 + rows, h_p + row0 + rows,
                                   sizeof(float) * (n - row0 - rows), cudaMemcpyHostToDevice, sx));
            CK(cudaEventRecord(ev_in, sx));
            CK(cudaStreamWaitEvent(sc, ev_in, 0));
            matvec(0, row0);
            matvec(row0 + rows, n);
            cg_dist_dot<<<1, BLOCK, 0, sc>>>(mine, p + row0, y, rows);
            CK_LAUNCH();
            exchange(mine, pap, 3);
            cg_dist_update_xr<<<1, BLOCK, 0, sc>>>(x, r, mine + 1, p + row0, y, pap, rr, size,
                                                   rows);
            CK_LAUNCH();
            exchange(mine + 1, rrn, 4);
            cg_dist_update_p<<<grid_1d(rows), BLOCK, 0, sc>>>(p + row0, r, rrn, rr, size, rows);
            CK_LAUNCH();
        }
        /* Every rank gets x. */
        CK(cudaMemcpyAsync(h_x + row0, x, sizeof(float) * rows, cudaMemcpyDeviceToHost, sc));
        CK(cudaStreamSynchronize(sc));
        pgm_allgather(h_x, counts.data(), displs.data(), MPI_FLOAT, 5);
    };
    std::vector<double> runs = pgm_time(a, run);
    if (rank == 0) {
        double sum = 0.0;
        for (long long i = 0; i < n; i++)
            sum += (double)h_x[i];
        char checksum[64];
        snprintf(checksum, sizeof checksum, "%.5e", sum);
        if (a.sample) {
            FILE *f = fopen(a.sample, "wb");
            std::vector<double> xd(h_x, h_x + n);
            if (!f || fwrite(xd.data(), sizeof(double), (size_t)n, f) != (size_t)n) {
                fprintf(stderr, "cg_mpi: cannot write %s\n", a.sample);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            fclose(f);
        }
        pgm_report("cg", a, size, device, runs, a.iterations, checksum,
                   bytes_sent / (a.warmup + a.repeats));
    }
    CK(cudaFree(A));
    CK(cudaFree(p));
    CK(cudaFree(x));
    CK(cudaFree(r));
    CK(cudaFree(y));
    CK(cudaFree(pap));
    CK(cudaFree(rr_a));
    CK(cudaFree(rr_b));
    CK(cudaFree(mine));
    CK(cudaFreeHost(h_p));
    CK(cudaFreeHost(h_x));
    CK(cudaFreeHost(h_s));
    MCK(MPI_Finalize());
    return 0;
}
