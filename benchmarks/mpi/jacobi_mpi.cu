/* jacobi_mpi.cu: the hand-written MPI + CUDA C baseline of jacobi_dist.py: the same stencil
 * (jacobi.py's grids, sizes and sweeps; kernels/jacobi.cu, the very kernels polygpu runs), one
 * GPU per rank (by local rank), each rank owning one block of rows (the rows of jacobi_dist.py's
 * partitions on that rank) of two grids, each kept with one halo row above and below.
 *
 * Per sweep: the block's first and last rows on an edge stream, copied at once to pinned host
 * buffers, while the interior rows run on a compute stream; the edge rows go to the neighbour
 * ranks and theirs come back (MPI point-to-point) into the halo rows of the grid just written.
 * A run: the init, the sweeps (an even number), the residual per rank (jacobi_residual, 256
 * partial sums added on the host) and every rank getting the total (as jacobi_dist.py's host
 * read of the partials). Rank 0 prints the JSON line and with --sample writes the checked rows
 * and the residual (float64) for check_sample.py. */
#include "mpi_common.h"

#include "../workloads/kernels/jacobi.cu"

/* jacobi.check_rows: rows 0, 1, each side of every 1/16 boundary, n-2, n-1. */
static std::vector<long long> check_rows(long long n) {
    long long s = n / 16;
    std::vector<long long> rows = {0, 1};
    for (int k = 1; k < 16; k++) {
        rows.push_back(k * s - 1);
        rows.push_back(k * s);
    }
    rows.push_back(n - 2);
    rows.push_back(n - 1);
    return rows;
}

int main(int argc, char **argv) {
    int rank, size;
    char device[320];
    pgm_args a = pgm_start(&argc, &argv, 2048, 100, &rank, &size, device, sizeof device);
    const long long n = a.n;
    if (n % 16 || a.iterations % 2) {
        if (rank == 0)
            fprintf(stderr, "jacobi_mpi: n must be a multiple of 16 and the sweeps even\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    std::vector<pgb_part> parts = pgb_partitions(n, size);
    if ((int)parts.size() != size || parts[size - 1].count < 2) {
        if (rank == 0)
            fprintf(stderr, "jacobi_mpi: n = %lld too small for %d ranks\n", n, size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const int lo = (int)parts[rank].offset, rows = (int)parts[rank].count, hi = lo + rows;
    const int up = rank > 0 ? rank - 1 : -1, down = rank + 1 < size ? rank + 1 : -1;
    /* Local grids: rows [lo - 1, hi + 1) (slot 0 and slot rows + 1 are the halos). */
    const size_t row_bytes = sizeof(float) * n, grid_bytes = row_bytes * (rows + 2);
    float *g[2];
    CK(cudaMalloc(&g[0], grid_bytes));
    CK(cudaMalloc(&g[1], grid_bytes));
    CK(cudaMemset(g[0], 0, grid_bytes));
    CK(cudaMemset(g[1], 0, grid_bytes));
    double *partial, *h_partial, *h_res;
    CK(cudaMalloc(&partial, sizeof(double) * 256));
    CK(cudaMallocHost(&h_partial, sizeof(double) * 256));
    CK(cudaMallocHost(&h_res, sizeof(double) * size));
    float *send_up, *send_down, *recv_up, *recv_down;
    CK(cudaMallocHost(&send_up, row_bytes));
    CK(cudaMallocHost(&send_down, row_bytes));
    CK(cudaMallocHost(&recv_up, row_bytes));
    CK(cudaMallocHost(&recv_down, row_bytes));
    cudaStream_t se, si;
    CK(cudaStreamCreateWithFlags(&se, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&si, cudaStreamNonBlocking));
    cudaEvent_t ev_e, ev_i;
    CK(cudaEventCreateWithFlags(&ev_e, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&ev_i, cudaEventDisableTiming));
    std::vector<int> ones(size, 1), idx(size);
    for (int k = 0; k < size; k++)
        idx[k] = k;

    auto row = [&](float *grid, long long r) { return grid + (r - (lo - 1)) * n; };
    /* Rows [r0, r0 + cnt) of dst from src (both local grids), on stream s. */
    auto sweep = [&](float *dst, const float *src, int r0, int cnt, cudaStream_t s) {
        if (cnt <= 0)
            return;
        dim3 grid((unsigned)pgb_cdiv(n, BLOCK), (unsigned)pgb_min(cnt, 65535), 1);
        jacobi_sweep<<<grid, BLOCK, 0, s>>>(row(dst, r0), src, r0, cnt, lo - 1, (int)n);
        CK_LAUNCH();
    };
    long long bytes_sent = 0;
    double residual = 0.0;
    auto run = [&]() {
        dim3 gi((unsigned)pgb_cdiv(n, BLOCK), (unsigned)pgb_min(rows, 65535), 1);
        jacobi_init<<<gi, BLOCK, 0, si>>>(row(g[0], lo), lo, rows, (int)n);
        CK_LAUNCH();
        /* The halos of the start grid: the neighbours' start rows, made here (no message). */
        if (up >= 0)
            jacobi_init<<<gi.x, BLOCK, 0, si>>>(row(g[0], lo - 1), lo - 1, 1, (int)n);
        if (down >= 0)
            jacobi_init<<<gi.x, BLOCK, 0, si>>>(row(g[0], hi), hi, 1, (int)n);
        CK_LAUNCH();
        CK(cudaEventRecord(ev_i, si));
        CK(cudaStreamWaitEvent(se, ev_i, 0));
        for (int k = 0; k < a.iterations; k++) {
            float *src = g[k % 2], *dst = g[1 - k % 2];
            /* The edge rows first, out to the host at once. */
            sweep(dst, src, lo, 1, se);
            sweep(dst, src, hi - 1, 1, se);
            if (up >= 0)
                CK(cudaMemcpyAsync(send_up, row(dst, lo), row_bytes, cudaMemcpyDeviceToHost, se));
            if (down >= 0)
                CK(cudaMemcpyAsync(send_down, row(dst, hi - 1), row_bytes, cudaMemcpyDeviceToHost,
                                   se));
            sweep(dst, src, lo + 1, rows - 2, si); /* the interior meanwhile */
            CK(cudaStreamSynchronize(se));
            MPI_Request req[4];
            int nreq = 0;
            if (up >= 0) {
                MCK(MPI_Irecv(recv_up, (int)n, MPI_FLOAT, up, 10 + k % 2, MPI_COMM_WORLD,
                              &req[nreq++]));
                MCK(MPI_Isend(send_up, (int)n, MPI_FLOAT, up, 10 + k % 2, MPI_COMM_WORLD,
                              &req[nreq++]));
            }
            if (down >= 0) {
                MCK(MPI_Irecv(recv_down, (int)n, MPI_FLOAT, down, 10 + k % 2, MPI_COMM_WORLD,
                              &req[nreq++]));
                MCK(MPI_Isend(send_down, (int)n, MPI_FLOAT, down, 10 + k % 2, MPI_COMM_WORLD,
                              &req[nreq++]));
            }
            MCK(MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE));
            bytes_sent += (long long)(nreq / 2) * (long long)row_bytes;
            if (up >= 0)
                CK(cudaMemcpyAsync(row(dst, lo - 1), recv_up, row_bytes, cudaMemcpyHostToDevice,
                                   se));
            if (down >= 0)
                CK(cudaMemcpyAsync(row(dst, hi), recv_down, row_bytes, cudaMemcpyHostToDevice, se));
            /* The next sweep reads all of dst: both streams wait for each other. */
            CK(cudaEventRecord(ev_e, se));
            CK(cudaEventRecord(ev_i, si));
            CK(cudaStreamWaitEvent(si, ev_e, 0));
            CK(cudaStreamWaitEvent(se, ev_i, 0));
            /* The pinned receive buffers are reused next sweep: the copies must be done. */
            CK(cudaStreamSynchronize(se));
        }
        jacobi_residual<<<grid_reduce((long long)rows * n), BLOCK, 0, si>>>(
            partial, row(g[0], lo), row(g[1], lo), (long long)rows * n);
        CK_LAUNCH();
        CK(cudaMemcpyAsync(h_partial, partial, sizeof(double) * 256, cudaMemcpyDeviceToHost, si));
        CK(cudaStreamSynchronize(si));
        double s = 0.0;
        for (int b = 0; b < 256; b++)
            s += h_partial[b];
        h_res[rank] = s;
        pgm_allgather(h_res, ones.data(), idx.data(), MPI_DOUBLE, 20);
        residual = 0.0;
        for (int k = 0; k < size; k++)
            residual += h_res[k];
    };
    std::vector<double> runs = pgm_time(a, run);
    /* The checked rows to rank 0 (untimed). */
    std::vector<long long> crows = check_rows(n);
    std::vector<double> sample(crows.size() * n + 1);
    std::vector<float> buf(n);
    for (size_t i = 0; i < crows.size(); i++) {
        long long rr = crows[i];
        int owner = 0;
        while (!(rr >= parts[owner].offset && rr < parts[owner].offset + parts[owner].count))
            owner++;
        if (owner == rank)
            CK(cudaMemcpy(buf.data(), row(g[0], rr), row_bytes, cudaMemcpyDeviceToHost));
        if (owner != 0) {
            if (rank == owner)
                MCK(MPI_Send(buf.data(), (int)n, MPI_FLOAT, 0, 30, MPI_COMM_WORLD));
            else if (rank == 0)
                MCK(MPI_Recv(buf.data(), (int)n, MPI_FLOAT, owner, 30, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE));
        }
        if (rank == 0)
            for (long long c = 0; c < n; c++)
                sample[i * n + c] = buf[c];
    }
    sample.back() = residual;
    if (rank == 0) {
        double sum = 0.0;
        for (size_t i = 0; i + 1 < sample.size(); i++)
            sum += sample[i];
        char checksum[96];
        snprintf(checksum, sizeof checksum, "%.9e/%.6e", sum, residual);
        if (a.sample) {
            FILE *f = fopen(a.sample, "wb");
            if (!f || fwrite(sample.data(), sizeof(double), sample.size(), f) != sample.size()) {
                fprintf(stderr, "jacobi_mpi: cannot write %s\n", a.sample);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            fclose(f);
        }
        pgm_report("jacobi", a, size, device, runs, a.iterations, checksum,
                   bytes_sent / (a.warmup + a.repeats));
    }
    CK(cudaFree(g[0]));
    CK(cudaFree(g[1]));
    CK(cudaFree(partial));
    CK(cudaFreeHost(h_partial));
    CK(cudaFreeHost(h_res));
    CK(cudaFreeHost(send_up));
    CK(cudaFreeHost(send_down));
    CK(cudaFreeHost(recv_up));
    CK(cudaFreeHost(recv_down));
    MCK(MPI_Finalize());
    return 0;
}
