/* mul.cu: MUL, dense matrix x vector with the matrix partitioned by rows (the GrCUDA paper's
 * 20000 x 20000 case among the sizes). The matrix comes from the host at every run, so with
 * more partitions the copy of one partition overlaps the product of the one before. The
 * product is linalg_matvec (linalg.cuh) on each partition, after linalg_zero. */
#include "linalg.cuh"

/* Rows [row0, row0 + rows) of an n-column matrix, column-major inside the partition:
 * A[i][j] = u(i * n + j) in [0, 1). */
/* polygpu: out float *a, long long row0, int rows, int n */
extern "C" __global__ void mul_init_matrix(float *a, long long row0, int rows, int n) {
    long long total = (long long)rows * n;
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total;
         e += (long long)blockDim.x * gridDim.x) {
        long long col = e / rows, row = row0 + e % rows;
        a[e] = pgb_uniform((unsigned int)(row * n + col), 7u);
    }
}

/* polygpu: out float *x, int n */
extern "C" __global__ void mul_init_vector(float *x, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        x[i] = pgb_uniform((unsigned int)i, 8u);
}
