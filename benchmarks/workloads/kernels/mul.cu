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

/* The version written the natural way (polygpu-split): the whole n x n matrix, row-major, one
 * block per row; the signatures say a block touches its row of a and of z and reads all of x,
 * so the runtime splits the product over the devices by ranges of rows (core/split.c). */

/* polygpu: out(rows=blocks) float *a, int n */
extern "C" __global__ void mul_init_matrix_split(float *a, int n) {
    long long r = blockIdx.x;
    for (int c = threadIdx.x; c < n; c += blockDim.x)
        a[r * n + c] = pgb_uniform((unsigned int)(r * n + c), 7u);
}

/* z[r] = a[r][:] . x (blockDim.x <= 256) */
/* polygpu: out(rows=blocks) float *z, in(rows=blocks) const float *a, in const float *x, int n */
extern "C" __global__ void mul_matvec_split(float *z, const float *a, const float *x, int n) {
    __shared__ float s[256];
    long long r = blockIdx.x;
    float sum = 0.0f;
    for (int c = threadIdx.x; c < n; c += blockDim.x)
        sum += a[r * n + c] * x[c];
    s[threadIdx.x] = sum;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w)
            s[threadIdx.x] += s[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        z[r] = s[0];
}
