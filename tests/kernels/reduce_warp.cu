// Warp-shuffle reduction: each warp folds its values with __shfl_down_sync, the warps'
// sums meet in a static __shared__ array, and the first warp folds those.
__inline__ __device__ float warp_sum(float v) {
    for (int offset = warpSize / 2; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

extern "C" __global__ void reduce_warp(const float *x, float *partial, int n) {
    static __shared__ float sums[32];
    int lane = threadIdx.x % warpSize, wid = threadIdx.x / warpSize;
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        v += x[i];
    v = warp_sum(v);
    if (lane == 0)
        sums[wid] = v;
    __syncthreads();
    v = threadIdx.x < blockDim.x / warpSize ? sums[lane] : 0.0f;
    if (wid == 0) {
        v = warp_sum(v);
        if (lane == 0)
            partial[blockIdx.x] = v;
    }
}
