// Inclusive scan in three launches: scan_blocks scans each block's slice (warp scans with
// __shfl_up_sync, then the warps' totals) and keeps each block's total; scan_sums scans the
// totals in one block; scan_add adds each block's offset (element-wise: a CPU device runs it
// on the plain loop although the same source has barriers).
__device__ int warp_inclusive(int v) {
    int lane = threadIdx.x & 31;
    for (int offset = 1; offset < 32; offset <<= 1) {
        int t = __shfl_up_sync(0xffffffffu, v, offset);
        if (lane >= offset)
            v += t;
    }
    return v;
}

// blockDim.x: a multiple of 32, at most 1024.
__device__ int block_inclusive(int v, int *warp_total) {
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    v = warp_inclusive(v);
    if (lane == 31)
        warp_total[w] = v;
    __syncthreads();
    if (w == 0) {
        int t = lane < (int)(blockDim.x >> 5) ? warp_total[lane] : 0;
        t = warp_inclusive(t);
        if (lane < (int)(blockDim.x >> 5))
            warp_total[lane] = t;
    }
    __syncthreads();
    if (w > 0)
        v += warp_total[w - 1];
    __syncthreads(); // warp_total is free again
    return v;
}

extern "C" __global__ void scan_blocks(const int *in, int *out, int *block_sums, int n) {
    __shared__ int warp_total[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = block_inclusive(i < n ? in[i] : 0, warp_total);
    if (i < n)
        out[i] = v;
    if (threadIdx.x == blockDim.x - 1)
        block_sums[blockIdx.x] = v;
}

extern "C" __global__ void scan_sums(int *block_sums, int nblocks) {
    __shared__ int warp_total[32];
    __shared__ int carry;
    if (threadIdx.x == 0)
        carry = 0;
    __syncthreads();
    for (int base = 0; base < nblocks; base += blockDim.x) {
        int i = base + threadIdx.x;
        int v = block_inclusive(i < nblocks ? block_sums[i] : 0, warp_total) + carry;
        if (i < nblocks)
            block_sums[i] = v;
        __syncthreads();
        if (threadIdx.x == blockDim.x - 1)
            carry = v;
        __syncthreads();
    }
}

extern "C" __global__ void scan_add(int *out, const int *block_sums, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (blockIdx.x > 0 && i < n)
        out[i] += block_sums[blockIdx.x - 1];
}
