/* cg.cu: CG, conjugate gradient on a dense symmetric positive definite matrix whose rows are
 * partitioned. Per iteration every partition multiplies its rows by the whole direction vector
 * p (so p goes to every GPU), the partial products are gathered into one vector y on one
 * device, where the O(n) vector updates run; alpha and beta stay on the device (no host
 * round trip per iteration). Heavy GPU-to-GPU traffic: n floats out to each GPU, n back.
 *
 * Iteration: zero(y_i), matvec(y_i, A_i, p) for each partition; gather(y, y_i) for each;
 * dot(pap, p, y); update_xr (x += alpha p, r -= alpha y, rr_new = r.r); update_p (p = r +
 * beta p); rotate (rr = rr_new; rr_new = pap = 0). */
#include "linalg.cuh"

/* Rows [row0, row0 + rows) of the n x n matrix, column-major inside the partition (see
 * linalg.cuh). A[i][j] = A[j][i] = u(min * n + max) - 1/2, plus `diag` on the diagonal: the
 * off-diagonal spectrum lies within about +-0.58 sqrt(n), so diag = 0.8 sqrt(n) makes it
 * positive definite with a small condition number. */
/* polygpu: out float *a, long long row0, int rows, int n, float diag */
extern "C" __global__ void cg_init_matrix(float *a, long long row0, int rows, int n, float diag) {
    long long total = (long long)rows * n;
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total;
         e += (long long)blockDim.x * gridDim.x) {
        long long col = e / rows, row = row0 + e % rows;
        long long lo = row < col ? row : col, hi = row < col ? col : row;
        float v = pgb_uniform((unsigned int)(lo * n + hi), 5u) - 0.5f;
        a[e] = row == col ? v + diag : v;
    }
}

/* polygpu: out float *b, int n */
extern "C" __global__ void cg_init_b(float *b, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        b[i] = pgb_uniform((unsigned int)i, 6u);
}

/* Start: x = 0, r = p = b; the scalars are zeroed (rr is then r.r by cg_dot). */
/* polygpu: out float *x, out float *r, out float *p, out float *scalars, in const float *b, int n
 */
extern "C" __global__ void cg_reset(float *x, float *r, float *p, float *scalars, const float *b,
                                    int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        x[i] = 0.0f;
        r[i] = b[i];
        p[i] = b[i];
    }
    if (blockIdx.x == 0 && threadIdx.x < 4)
        scalars[threadIdx.x] = 0.0f;
}

/* y[offset + i] = part[i]: one partition's rows of A p into the whole vector. */
/* polygpu: inout float *y, in const float *part, int offset, int rows */
extern "C" __global__ void cg_gather(float *y, const float *part, int offset, int rows) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += blockDim.x * gridDim.x)
        y[offset + i] = part[i];
}

/* scalars[slot] += a . b (launch with the reduction grid; the slot must be zero). */
/* polygpu: inout float *scalars, in const float *a, in const float *b, int n, int slot */
extern "C" __global__ void cg_dot(float *scalars, const float *a, const float *b, int n, int slot) {
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        sum += a[i] * b[i];
    atomicAdd(&scalars[slot], sum);
}

/* Scalars: [0] rr = r.r, [1] pap = p.Ap, [2] rr_new. alpha = rr / pap; x += alpha p;
 * r -= alpha y; rr_new += r.r (reduction grid; rr_new zero before). */
/* polygpu: inout float *x, inout float *r, inout float *scalars, in const float *p, in const float
 * *y, int n */
extern "C" __global__ void cg_update_xr(float *x, float *r, float *scalars, const float *p,
                                        const float *y, int n) {
    float rr = scalars[0], pap = scalars[1];
    float alpha = pap != 0.0f ? rr / pap : 0.0f;
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        x[i] += alpha * p[i];
        float ri = r[i] - alpha * y[i];
        r[i] = ri;
        sum += ri * ri;
    }
    atomicAdd(&scalars[2], sum);
}

/* beta = rr_new / rr; p = r + beta p. */
/* polygpu: inout float *p, in const float *r, in const float *scalars, int n */
extern "C" __global__ void cg_update_p(float *p, const float *r, const float *scalars, int n) {
    float beta = scalars[0] != 0.0f ? scalars[2] / scalars[0] : 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        p[i] = r[i] + beta * p[i];
}

/* End of an iteration: rr = rr_new, rr_new = pap = 0. One thread. */
/* polygpu: inout float *scalars */
extern "C" __global__ void cg_rotate(float *scalars) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        scalars[0] = scalars[2];
        scalars[1] = 0.0f;
        scalars[2] = 0.0f;
    }
}
