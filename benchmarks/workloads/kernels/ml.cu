/* ml.cu: ML, the GrCUDA paper's machine-learning ensemble: a categorical Naive Bayes and a Ridge
 * classifier on the same partitioned input (rows of f word counts), each ending in a softmax,
 * combined by argmax. The DAG is imbalanced: the Ridge branch normalises the columns, which
 * needs statistics over every partition (a chain of combines, then one finalize whose result
 * every partition reads), while the Naive Bayes branch has no cross-partition step.
 *
 * Per partition i:  ridge: zero -> stats -> [combine chain, finalize] -> normalize -> project
 *                   -> softmax;  bayes: scores -> rowmax -> logsumexp -> exp -> softmax;
 *                   then argmax(ridge, bayes) -> labels. */
#include "common.cuh"

/* Word counts 0..9 for rows [row0, row0 + rows) of f features. */
/* polygpu: out int *x, long long row0, int rows, int f */
extern "C" __global__ void ml_init_x(int *x, long long row0, int rows, int f) {
    long long n = (long long)rows * f, base = row0 * f;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)blockDim.x * gridDim.x)
        x[i] = (int)(pgb_hash((unsigned int)(base + i), 4u) % 10u);
}

/* w[i] = offset + scale * u(i): model parameters (scale a power of two: exact in float). */
/* polygpu: out float *w, int n, unsigned int seed, float scale, float offset */
extern "C" __global__ void ml_init_param(float *w, int n, unsigned int seed, float scale,
                                         float offset) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        w[i] = offset + scale * pgb_uniform((unsigned int)i, seed);
}

/* polygpu: out double *sum, out double *sumsq, int f */
extern "C" __global__ void ml_zero_stats(double *sum, double *sumsq, int f) {
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < f; j += blockDim.x * gridDim.x) {
        sum[j] = 0.0;
        sumsq[j] = 0.0;
    }
}

/* Column sums and sums of squares of one partition. Grid (ceil(f / block), ceil(rows / chunk)):
 * a thread adds `chunk` rows of its column with atomicAdd. */
/* polygpu: inout double *sum, inout double *sumsq, in const int *x, int rows, int f, int chunk */
extern "C" __global__ void ml_rr_stats(double *sum, double *sumsq, const int *x, int rows, int f,
                                       int chunk) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= f)
        return;
    int r0 = blockIdx.y * chunk;
    int r1 = r0 + chunk < rows ? r0 + chunk : rows;
    double s = 0.0, s2 = 0.0;
    for (int r = r0; r < r1; r++) {
        double v = (double)x[(long long)r * f + j];
        s += v;
        s2 += v * v;
    }
    atomicAdd(&sum[j], s);
    atomicAdd(&sumsq[j], s2);
}

/* total = part (first partition) or total + part (the others): the cross-partition chain. */
/* polygpu: inout double *total, inout double *total_sq, in const double *part, in const double
 * *part_sq, int f, int first */
extern "C" __global__ void ml_rr_combine(double *total, double *total_sq, const double *part,
                                         const double *part_sq, int f, int first) {
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < f; j += blockDim.x * gridDim.x) {
        total[j] = first ? part[j] : total[j] + part[j];
        total_sq[j] = first ? part_sq[j] : total_sq[j] + part_sq[j];
    }
}

/* Column mean and 1 / standard deviation over all n rows. */
/* polygpu: out float *mean, out float *istd, in const double *sum, in const double *sumsq, int n,
 * int f */
extern "C" __global__ void ml_rr_finalize(float *mean, float *istd, const double *sum,
                                          const double *sumsq, int n, int f) {
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < f; j += blockDim.x * gridDim.x) {
        double m = sum[j] / n;
        double var = sumsq[j] / n - m * m;
        mean[j] = (float)m;
        istd[j] = (float)(1.0 / sqrt(var > 1e-12 ? var : 1e-12));
    }
}

/* z = (x - mean) * istd, column by column. */
/* polygpu: out float *z, in const int *x, in const float *mean, in const float *istd, int rows, int
 * f */
extern "C" __global__ void ml_rr_normalize(float *z, const int *x, const float *mean,
                                           const float *istd, int rows, int f) {
    long long n = (long long)rows * f;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)blockDim.x * gridDim.x) {
        int j = (int)(i % f);
        z[i] = ((float)x[i] - mean[j]) * istd[j];
    }
}

/* Ridge scores: out[row, k] = icpt[k] + z[row, :] . coef[k, :]; a thread per (row, class). */
/* polygpu: out float *out, in const float *z, in const float *coef, in const float *icpt, int rows,
 * int f, int c */
extern "C" __global__ void ml_rr_project(float *out, const float *z, const float *coef,
                                         const float *icpt, int rows, int f, int c) {
    long long n = (long long)rows * c;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)blockDim.x * gridDim.x) {
        long long row = i / c;
        int k = (int)(i % c);
        const float *zr = z + row * f, *w = coef + (long long)k * f;
        float sum = 0.0f;
        for (int j = 0; j < f; j++)
            sum += zr[j] * w[j];
        out[i] = icpt[k] + sum;
    }
}

/* Naive Bayes joint log likelihood: out[row, k] = prior[k] + x[row, :] . logp[k, :]. */
/* polygpu: out float *out, in const int *x, in const float *logp, in const float *prior, int rows,
 * int f, int c */
extern "C" __global__ void ml_nb_scores(float *out, const int *x, const float *logp,
                                        const float *prior, int rows, int f, int c) {
    long long n = (long long)rows * c;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)blockDim.x * gridDim.x) {
        long long row = i / c;
        int k = (int)(i % c);
        const int *xr = x + row * f;
        const float *w = logp + (long long)k * f;
        float sum = 0.0f;
        for (int j = 0; j < f; j++)
            sum += (float)xr[j] * w[j];
        out[i] = prior[k] + sum;
    }
}

/* polygpu: out float *amax, in const float *s, int rows, int c */
extern "C" __global__ void ml_nb_rowmax(float *amax, const float *s, int rows, int c) {
    for (int row = blockIdx.x * blockDim.x + threadIdx.x; row < rows;
         row += blockDim.x * gridDim.x) {
        const float *sr = s + (long long)row * c;
        float m = sr[0];
        for (int k = 1; k < c; k++)
            m = sr[k] > m ? sr[k] : m;
        amax[row] = m;
    }
}

/* lse[row] = amax[row] + log(sum_k exp(s[row, k] - amax[row])) */
/* polygpu: out float *lse, in const float *s, in const float *amax, int rows, int c */
extern "C" __global__ void ml_nb_logsumexp(float *lse, const float *s, const float *amax, int rows,
                                           int c) {
    for (int row = blockIdx.x * blockDim.x + threadIdx.x; row < rows;
         row += blockDim.x * gridDim.x) {
        const float *sr = s + (long long)row * c;
        float sum = 0.0f;
        for (int k = 0; k < c; k++)
            sum += expf(sr[k] - amax[row]);
        lse[row] = amax[row] + logf(sum);
    }
}

/* Posterior probabilities: s[row, k] = exp(s[row, k] - lse[row]). */
/* polygpu: inout float *s, in const float *lse, int rows, int c */
extern "C" __global__ void ml_nb_exp(float *s, const float *lse, int rows, int c) {
    long long n = (long long)rows * c;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)blockDim.x * gridDim.x)
        s[i] = expf(s[i] - lse[i / c]);
}

/* Row-wise softmax in place. */
/* polygpu: inout float *s, int rows, int c */
extern "C" __global__ void ml_softmax(float *s, int rows, int c) {
    for (int row = blockIdx.x * blockDim.x + threadIdx.x; row < rows;
         row += blockDim.x * gridDim.x) {
        float *sr = s + (long long)row * c;
        float m = sr[0];
        for (int k = 1; k < c; k++)
            m = sr[k] > m ? sr[k] : m;
        float sum = 0.0f;
        for (int k = 0; k < c; k++)
            sum += expf(sr[k] - m);
        for (int k = 0; k < c; k++)
            sr[k] = expf(sr[k] - m) / sum;
    }
}

/* The ensemble: label[row] = argmax_k (a[row, k] + b[row, k]), the first on ties. */
/* polygpu: out int *label, in const float *a, in const float *b, int rows, int c */
extern "C" __global__ void ml_argmax(int *label, const float *a, const float *b, int rows, int c) {
    for (int row = blockIdx.x * blockDim.x + threadIdx.x; row < rows;
         row += blockDim.x * gridDim.x) {
        const float *ar = a + (long long)row * c, *br = b + (long long)row * c;
        int best = 0;
        float v = ar[0] + br[0];
        for (int k = 1; k < c; k++) {
            float w = ar[k] + br[k];
            if (w > v) {
                v = w;
                best = k;
            }
        }
        label[row] = best;
    }
}
