/* cg_dist.cu: CG with its vectors distributed by rows (benchmarks/mpi): every partition of rows
 * keeps its pieces of x, r, p and y and its own partial dot products; the scalars alpha and beta
 * are the sums of every partition's partials, added in partition order inside the kernels (so
 * the result does not depend on how the partitions sit on ranks or devices). The matrix and the
 * product are CG's (cg.cu: cg_init_matrix, linalg_zero, linalg_matvec); p is read whole by the
 * product, so each partition's piece of p goes to every rank (an all-gather per iteration).
 *
 * Iteration k (rr: the partials of r.r before, rr_new after; pap: of p.Ap), per partition:
 *   zero(y_i); matvec(y_i, A_i, p); dot(pap_i, p_i, y_i);
 *   update_xr(x_i, r_i, rr_new_i, p_i, y_i, pap, rr)   alpha = sum rr / sum pap
 *   update_p(p_i, r_i, rr_new, rr)                      beta = sum rr_new / sum rr
 * and rr, rr_new swap roles the next iteration (two arrays, no copy).
 * The partial dot products are one block of 256 threads each (deterministic, written whole). */
#include "linalg.cuh"

__device__ __forceinline__ float pgb_block_sum(float v) {
    __shared__ float s[256]; /* blockDim.x == 256 */
    s[threadIdx.x] = v;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w)
            s[threadIdx.x] += s[threadIdx.x + w];
        __syncthreads();
    }
    return s[0];
}

__device__ __forceinline__ float pgb_sum_parts(const float *v, int nparts) {
    float t = 0.0f;
    for (int k = 0; k < nparts; k++)
        t += v[k];
    return t;
}

/* Rows [row0, row0 + rows): x = 0, r = p = b (b as cg_init_b makes it); rr[0] = r.r of these
 * rows. One block of 256 threads. */
/* polygpu: out float *x, out float *r, out float *p, out float *rr, long long row0, int rows */
extern "C" __global__ void cg_dist_reset(float *x, float *r, float *p, float *rr, long long row0,
                                         int rows) {
    float sum = 0.0f;
    for (int i = threadIdx.x; i < rows; i += blockDim.x) {
        float b = pgb_uniform((unsigned int)(row0 + i), 6u);
        x[i] = 0.0f;
        r[i] = b;
        p[i] = b;
        sum += b * b;
    }
    sum = pgb_block_sum(sum);
    if (threadIdx.x == 0)
        rr[0] = sum;
}

/* out[0] = a . b over `rows` elements. One block of 256 threads. */
/* polygpu: out float *out, in const float *a, in const float *b, int rows */
extern "C" __global__ void cg_dist_dot(float *out, const float *a, const float *b, int rows) {
    float sum = 0.0f;
    for (int i = threadIdx.x; i < rows; i += blockDim.x)
        sum += a[i] * b[i];
    sum = pgb_block_sum(sum);
    if (threadIdx.x == 0)
        out[0] = sum;
}

/* alpha = sum(rr) / sum(pap); x += alpha p; r -= alpha y; rr_new[0] = r.r (these rows). One block
 * of 256 threads. */
/* polygpu: inout float *x, inout float *r, out float *rr_new, in const float *p, in const float
 * *y, in const float *pap, in const float *rr, int nparts, int rows */
extern "C" __global__ void cg_dist_update_xr(float *x, float *r, float *rr_new, const float *p,
                                             const float *y, const float *pap, const float *rr,
                                             int nparts, int rows) {
    float num = pgb_sum_parts(rr, nparts), den = pgb_sum_parts(pap, nparts);
    float alpha = den != 0.0f ? num / den : 0.0f;
    float sum = 0.0f;
    for (int i = threadIdx.x; i < rows; i += blockDim.x) {
        x[i] += alpha * p[i];
        float ri = r[i] - alpha * y[i];
        r[i] = ri;
        sum += ri * ri;
    }
    sum = pgb_block_sum(sum);
    if (threadIdx.x == 0)
        rr_new[0] = sum;
}

/* beta = sum(rr_new) / sum(rr); p = r + beta p (these rows). Any grid. */
/* polygpu: inout float *p, in const float *r, in const float *rr_new, in const float *rr, int
 * nparts, int rows */
extern "C" __global__ void cg_dist_update_p(float *p, const float *r, const float *rr_new,
                                            const float *rr, int nparts, int rows) {
    float den = pgb_sum_parts(rr, nparts);
    float beta = den != 0.0f ? pgb_sum_parts(rr_new, nparts) / den : 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += blockDim.x * gridDim.x)
        p[i] = r[i] + beta * p[i];
}
