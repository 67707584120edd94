// Stream compaction with warp votes: __ballot_sync says which lanes keep their element,
// __popc of the lower lanes' bits gives each one its place, and the warps' counts become
// offsets in shared memory. Each block writes its kept elements, in order, at the start of
// its own slice of out, and their number to block_counts.
extern "C" __global__ void compact(const int *in, int *out, int *block_counts, int n,
                                   int threshold) {
    __shared__ int warp_count[32];
    __shared__ int warp_offset[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    int v = i < n ? in[i] : 0;
    bool keep = i < n && v > threshold;
    unsigned int ballot = __ballot_sync(0xffffffffu, keep);
    int pos = __popc(ballot & ((1u << lane) - 1));
    if (lane == 0)
        warp_count[w] = __popc(ballot);
    __syncthreads();
    if (threadIdx.x == 0) {
        int s = 0;
        for (int k = 0; k < nw; k++) {
            warp_offset[k] = s;
            s += warp_count[k];
        }
        block_counts[blockIdx.x] = s;
    }
    __syncthreads();
    if (keep)
        out[blockIdx.x * blockDim.x + warp_offset[w] + pos] = v;
}
