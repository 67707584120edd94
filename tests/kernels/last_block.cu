// The "last block" reduction: every block writes its partial sum, fences, and counts itself
// with atomicInc; the block that counts last (a __shared__ flag tells its threads) sums the
// partials. The counter wraps back to 0 for the next launch.
extern "C" __global__ void sum_last_block(const float *x, float *partial, float *total,
                                          unsigned int *counter, int n) {
    __shared__ float s[128]; // blockDim.x == 128
    __shared__ bool last;
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        v += x[i];
    s[threadIdx.x] = v;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k)
            s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = s[0];
        __threadfence();
        unsigned int ticket = atomicInc(counter, gridDim.x - 1);
        last = ticket == gridDim.x - 1;
    }
    __syncthreads();
    if (last) {
        __threadfence();
        float t = 0.0f;
        for (int b = threadIdx.x; b < gridDim.x; b += blockDim.x)
            t += ((volatile float *)partial)[b];
        s[threadIdx.x] = t;
        __syncthreads();
        for (int k = blockDim.x / 2; k > 0; k >>= 1) {
            if (threadIdx.x < k)
                s[threadIdx.x] += s[threadIdx.x + k];
            __syncthreads();
        }
        if (threadIdx.x == 0)
            *total = s[0];
    }
}
