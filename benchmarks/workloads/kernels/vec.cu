/* vec.cu: VEC, the GrCUDA paper's vector squares. Per partition: square x and y (independent),
 * then reduce the sum of the differences of the squares; the host adds the partitions' sums.
 * Bound by the host-to-device copies of x and y. */
#include "common.cuh"

/* x[i] = u(offset + i), y[i] = u'(offset + i) / 2: the partition [offset, offset + n). */
/* polygpu: out float *x, out float *y, long long offset, int n */
extern "C" __global__ void vec_init(float *x, float *y, long long offset, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        unsigned int g = (unsigned int)(offset + i);
        x[i] = pgb_uniform(g, 1u);
        y[i] = 0.5f * pgb_uniform(g, 2u);
    }
}

/* polygpu: out float *y, in const float *x, int n */
extern "C" __global__ void vec_square(float *y, const float *x, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = x[i] * x[i];
}

/* res[0] += sum of x[i] - y[i]. Each thread sums many elements in double, then one atomicAdd:
 * launch it with few threads (pgb reduction grid), and res zeroed. */
/* polygpu: inout double *res, in const float *x, in const float *y, int n */
extern "C" __global__ void vec_reduce(double *res, const float *x, const float *y, int n) {
    double sum = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        sum += (double)x[i] - (double)y[i];
    atomicAdd(res, sum);
}

/* The version written the natural way (polygpu-split): one launch per kernel over the whole
 * vectors, one element per thread, each signature saying which elements a block touches, so the
 * runtime splits each launch over the devices by ranges of blocks (core/split.c). */

/* polygpu: out(chunks=blocks) float *x, out(chunks=blocks) float *y, int n */
extern "C" __global__ void vec_init_split(float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = pgb_uniform((unsigned int)i, 1u);
        y[i] = 0.5f * pgb_uniform((unsigned int)i, 2u);
    }
}

/* polygpu: out(chunks=blocks) float *y, in(chunks=blocks) const float *x, int n */
extern "C" __global__ void vec_square_split(float *y, const float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i] * x[i];
}

/* partial[b] = the sum of x[i] - y[i] over block b's 16 runs of blockDim elements (blockDim at
 * most 256): per-block partial sums the host adds, since one element written by every block
 * could not be split. */
/* polygpu: out(rows=blocks) double *partial, in(chunks=blocks*16) const float *x, in(chunks=blocks*16) const float *y, int n */
extern "C" __global__ void vec_reduce_split(double *partial, const float *x, const float *y,
                                           int n) {
    __shared__ double s[256];
    long long base = (long long)blockIdx.x * blockDim.x * 16;
    double sum = 0.0;
    for (int j = 0; j < 16; j++) {
        long long i = base + (long long)j * blockDim.x + threadIdx.x;
        if (i < n)
            sum += (double)x[i] - (double)y[i];
    }
    s[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned int w = blockDim.x / 2; w > 0; w /= 2) {
        if (threadIdx.x < w)
            s[threadIdx.x] += s[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        partial[blockIdx.x] = s[0];
}
