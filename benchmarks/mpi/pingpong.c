/* pingpong.c: MPI ping-pong of host buffers between ranks 0 and 1, 8 B to 1 MiB: the one-way
 * time and bandwidth of each size, which the simulated clusters' network figures within a node
 * assume (the .cluster files of devices/sim/presets: intra_us, intra_gbps, eager_bytes; the step
 * where the time jumps is the eager limit). Rank 0 prints "bytes one_way_us GB/s" per size.
 *
 *     mpicc -O2 -o pingpong benchmarks/mpi/pingpong.c && mpirun -np 2 ./pingpong */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (!rank)
            fprintf(stderr, "pingpong: needs 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    static const long sizes[] = {8,    64,    512,   2048,  4096,   4160,
                                 8192, 16384, 24576, 65536, 262144, 1048576};
    char *buf = malloc(1 << 20);
    memset(buf, 1, 1 << 20);
    if (!rank)
        printf("# bytes one_way_us GB/s (MPI ping-pong of host buffers, ranks 0 and 1)\n");
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        int n = (int)sizes[i], iters = n >= 262144 ? 200 : 2000;
        double t0 = 0;
        for (int k = -100; k < iters; k++) { /* 100 untimed rounds first */
            if (k == 0) {
                MPI_Barrier(MPI_COMM_WORLD);
                t0 = MPI_Wtime();
            }
            if (rank == 0) {
                MPI_Send(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
        }
        double us = (MPI_Wtime() - t0) / (2.0 * iters) * 1e6;
        if (!rank)
            printf("%d %.3f %.3f\n", n, us, n / us / 1e3);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
