/* bs.cu: B&S, Black & Scholes call prices of many independent vectors of stock prices (double).
 * Streaming: each partition is copied in, priced and copied out; no data moves between GPUs. */
#include "common.cuh"

/* Stock prices in [16, 80): exact in double. */
/* polygpu: out double *s, long long offset, int n */
extern "C" __global__ void bs_init(double *s, long long offset, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        s[i] = 16.0 + 64.0 * (double)pgb_uniform((unsigned int)(offset + i), 3u);
}

/* Cumulative normal distribution, the polynomial approximation of Abramowitz and Stegun 26.2.17
 * (as in the CUDA samples' BlackScholes and GrCUDA's B&S). */
__device__ __forceinline__ double bs_cnd(double d) {
    const double a1 = 0.31938153, a2 = -0.356563782, a3 = 1.781477937, a4 = -1.821255978,
                 a5 = 1.330274429, rsqrt2pi = 0.39894228040143267794;
    double q = 1.0 / (1.0 + 0.2316419 * fabs(d));
    double c = rsqrt2pi * exp(-0.5 * d * d) * (q * (a1 + q * (a2 + q * (a3 + q * (a4 + q * a5)))));
    return d > 0.0 ? 1.0 - c : c;
}

/* European call price for stock price s[i], strike k, riskless rate r, volatility v, years t. */
/* polygpu: out double *call, in const double *s, int n, double r, double v, double t, double k */
extern "C" __global__ void bs(double *call, const double *s, int n, double r, double v, double t,
                              double k) {
    double sqrt_t = sqrt(t), discount = exp(-r * t);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        double d1 = (log(s[i] / k) + (r + 0.5 * v * v) * t) / (v * sqrt_t);
        double d2 = d1 - v * sqrt_t;
        call[i] = s[i] * bs_cnd(d1) - k * discount * bs_cnd(d2);
    }
}

/* The version written the natural way (polygpu-split): one launch per kernel over the whole
 * arrays, one element per thread, split over the devices by the signatures' block ranges. */

/* polygpu: out(chunks=blocks) double *s, int n */
extern "C" __global__ void bs_init_split(double *s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        s[i] = 16.0 + 64.0 * (double)pgb_uniform((unsigned int)i, 3u);
}

/* polygpu: out(chunks=blocks) double *call, in(chunks=blocks) const double *s, int n, double r, double v, double t, double k */
extern "C" __global__ void bs_split(double *call, const double *s, int n, double r, double v,
                                   double t, double k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double sqrt_t = sqrt(t), discount = exp(-r * t);
        double d1 = (log(s[i] / k) + (r + 0.5 * v * v) * t) / (v * sqrt_t);
        double d2 = d1 - v * sqrt_t;
        call[i] = s[i] * bs_cnd(d1) - k * discount * bs_cnd(d2);
    }
}
