/* linalg.cuh: dense matrix x vector on a block of rows, shared by CG and MUL.
 *
 * A partition holds `rows` consecutive rows of an n-column matrix stored column-major inside
 * the partition (element (r, c) at c * rows + r), so that the threads of a warp, one row each,
 * read consecutive addresses. The columns are split in chunks of `chunk` (grid.y chunks) to
 * give the GPU enough threads when a partition has few rows; each thread adds its partial dot
 * product to y[r] with atomicAdd, so y must be zero before the launch (linalg_zero). */
#ifndef PGB_LINALG_CUH
#define PGB_LINALG_CUH
#include "common.cuh"

/* polygpu: out float *y, int n */
extern "C" __global__ void linalg_zero(float *y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = 0.0f;
}

/* y[r] += sum over this thread's columns of a[c * rows + r] * x[c]. Grid: (ceil(rows / block),
 * ceil(n / chunk)). */
/* polygpu: inout float *y, in const float *a, in const float *x, int rows, int n, int chunk */
extern "C" __global__ void linalg_matvec(float *y, const float *a, const float *x, int rows, int n,
                                         int chunk) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    int c0 = blockIdx.y * chunk;
    int c1 = c0 + chunk < n ? c0 + chunk : n;
    float sum = 0.0f;
    for (int c = c0; c < c1; c++)
        sum += a[(long long)c * rows + r] * x[c];
    atomicAdd(&y[r], sum);
}

#endif
