// Row softmax, one block per row: a block-wide max, then a block-wide sum of exponentials,
// each a warp butterfly (__shfl_xor_sync) and a pass over the warps' results in shared memory.
// Templated device helpers and functors; fast-math intrinsics __expf and __fdividef.
template <typename Op> __device__ __forceinline__ float warp_all_reduce(float v, Op op) {
    for (int offset = 16; offset > 0; offset >>= 1)
        v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;
}

struct Max {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct Sum {
    __device__ float operator()(float a, float b) const { return a + b; }
};

// blockDim.x: a multiple of 32.
template <typename Op> __device__ float block_all_reduce(float v, Op op, float identity) {
    __shared__ float part[32];
    __shared__ float result;
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    v = warp_all_reduce(v, op);
    if (lane == 0)
        part[w] = v;
    __syncthreads();
    if (w == 0) {
        v = lane < (int)(blockDim.x >> 5) ? part[lane] : identity;
        v = warp_all_reduce(v, op);
        if (lane == 0)
            result = v;
    }
    __syncthreads();
    v = result;
    __syncthreads(); // part and result are free again
    return v;
}

extern "C" __global__ void softmax_rows(const float *x, float *y, int cols) {
    const float *row = x + (size_t)blockIdx.x * cols;
    float *out = y + (size_t)blockIdx.x * cols;
    float m = -3.402823466e38f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        m = fmaxf(m, row[c]);
    m = block_all_reduce(m, Max(), -3.402823466e38f);
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        s += __expf(row[c] - m);
    s = block_all_reduce(s, Sum(), 0.0f);
    float inv = __fdividef(1.0f, s);
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        out[c] = __expf(row[c] - m) * inv;
}
