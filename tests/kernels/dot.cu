// Dot product: per-thread products summed over a grid-stride slice, a shared-memory tree per
// block, then one float atomicAdd per block into the result.
extern "C" __global__ void dot(const float *a, const float *b, float *result, int n) {
    __shared__ float cache[256]; // blockDim.x == 256
    float t = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        t += a[i] * b[i];
    cache[threadIdx.x] = t;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k /= 2) {
        if (threadIdx.x < k)
            cache[threadIdx.x] += cache[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        atomicAdd(result, cache[0]);
}
