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
