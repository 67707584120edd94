/* jacobi.cu: JACOBI, a banded 2-D stencil with halo exchange: 5-point Jacobi sweeps on an n x n
 * float32 grid whose boundary (rows 0 and n - 1, columns 0 and n - 1) keeps its values. Two
 * grids, swapped every sweep; the rows are partitioned, and a partition's sweep reads its rows of
 * one grid plus one halo row above and one below (the neighbours' rows) and writes its rows of
 * the other grid. Across GPUs, only the halo rows move.
 *
 * A run: jacobi_init on every partition's rows of the first grid (the start values), an even
 * number of sweeps (the result is back in the first grid), then jacobi_residual per partition:
 * the sum of squares of the last sweep's change, per block, which the host adds up.
 *
 * Launch geometry (workloads/common.py stencil_geometry, cuda/common.h): blocks of 256 threads
 * along the columns, grid (ceil(n / 256), min(rows, 65535)), each block row looping over the
 * partition's rows. */
#include "common.cuh"

/* Rows [lo, lo + rows) of the start grid: u(r * n + c) for every element, boundary included
 * (the boundary keeps these values). u points at row lo. */
/* polygpu: out float *u, int lo, int rows, int n */
extern "C" __global__ void jacobi_init(float *u, int lo, int rows, int n) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= n)
        return;
    for (int i = blockIdx.y; i < rows; i += gridDim.y) {
        long long r = lo + i;
        u[(long long)i * n + c] = pgb_uniform((unsigned int)(r * n + c), 9u);
    }
}

/* The new value of element (r, c), s pointing at its old value: boundary elements are copied;
 * the four neighbours are added in a fixed order so that every version and the NumPy reference
 * round the same way. */
__device__ __forceinline__ float jacobi_point(const float *s, int r, int c, int n) {
    if (r == 0 || r == n - 1 || c == 0 || c == n - 1)
        return s[0];
    return 0.25f * (((s[-n] + s[n]) + s[-1]) + s[1]);
}

/* One sweep of rows [lo, lo + rows): dst points at row lo of the grid written, src at row
 * `first` of the grid read (first = lo - 1, or 0 for the top partition: src holds the rows
 * [first, min(lo + rows + 1, n)), the partition's rows and its halo). The four neighbours are
 * added in a fixed order so that every version and the NumPy reference round the same way;
 * boundary elements are copied. */
/* polygpu: out float *dst, in const float *src, int lo, int rows, int first, int n */
extern "C" __global__ void jacobi_sweep(float *dst, const float *src, int lo, int rows, int first,
                                        int n) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= n)
        return;
    for (int i = blockIdx.y; i < rows; i += gridDim.y) {
        int r = lo + i;
        dst[(long long)i * n + c] = jacobi_point(src + (long long)(r - first) * n + c, r, c, n);
    }
}

/* partial[b] = the sum over block b's elements of (a - b)^2 in double (reduction grid, at most
 * 256 blocks of 256 threads); block 0 zeroes the slots of blocks that do not exist, so all 256
 * are written. a and b: `count` elements each (one partition's rows of the two grids). */
/* polygpu: out double *partial, in const float *a, in const float *b, long long count */
extern "C" __global__ void jacobi_residual(double *partial, const float *a, const float *b,
                                           long long count) {
    __shared__ double s[256]; /* blockDim.x == 256 */
    double sum = 0.0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
         i += (long long)blockDim.x * gridDim.x) {
        double d = (double)a[i] - (double)b[i];
        sum += d * d;
    }
    s[threadIdx.x] = sum;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w)
            s[threadIdx.x] += s[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        partial[blockIdx.x] = s[0];
    if (blockIdx.x == 0)
        for (int k = gridDim.x + threadIdx.x; k < 256; k += blockDim.x)
            partial[k] = 0.0;
}

/* The version written the natural way (polygpu-split): one launch per kernel over the whole
 * grids, one block per row (its threads loop over the columns), each signature saying which
 * rows a block touches — so the runtime splits each launch over the devices by ranges of rows,
 * and a sweep after sweep moves only the halo rows between them (core/split.c). */

/* polygpu: out(rows=blocks) float *u, int n */
extern "C" __global__ void jacobi_init_split(float *u, int n) {
    long long r = blockIdx.x;
    for (int c = threadIdx.x; c < n; c += blockDim.x)
        u[r * n + c] = pgb_uniform((unsigned int)(r * n + c), 9u);
}

/* polygpu: out(rows=blocks) float *dst, in(rows=blocks, halo=1) const float *src, int n */
extern "C" __global__ void jacobi_sweep_split(float *dst, const float *src, int n) {
    int r = blockIdx.x;
    for (int c = threadIdx.x; c < n; c += blockDim.x) {
        dst[(long long)r * n + c] = jacobi_point(src + (long long)r * n + c, r, c, n);
    }
}

/* partial[r] = the sum over row r of (a - b)^2 in double: per-row sums the host adds. */
/* polygpu: out(rows=blocks) double *partial, in(rows=blocks) const float *a, in(rows=blocks) const float *b, int n */
extern "C" __global__ void jacobi_residual_split(double *partial, const float *a, const float *b,
                                                 int n) {
    __shared__ double s[256]; /* blockDim.x <= 256 */
    long long r = blockIdx.x;
    double sum = 0.0;
    for (int c = threadIdx.x; c < n; c += blockDim.x) {
        double d = (double)a[r * n + c] - (double)b[r * n + c];
        sum += d * d;
    }
    s[threadIdx.x] = sum;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w)
            s[threadIdx.x] += s[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        partial[r] = s[0];
}
