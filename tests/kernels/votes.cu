// The block and warp collectives one by one, on 2-D blocks whose last warp is partial
// (20 x 3 = 60 threads: lanes 0..31 and 0..27): __syncthreads_count/and/or, __activemask,
// __ballot_sync, __any_sync, __all_sync, __shfl_sync within groups of 8, __shfl_xor_sync,
// __match_any_sync, __reduce_add_sync, __syncwarp; 12 results per thread.
extern "C" __global__ void votes(const int *in, int *out, int n) {
    int t = threadIdx.x + blockDim.x * threadIdx.y;
    int i = blockIdx.x * (blockDim.x * blockDim.y) + t;
    int v = i < n ? in[i] : 0;
    unsigned int active = __activemask(); // the lanes this warp has
    int count = __syncthreads_count(v & 1);
    int all = __syncthreads_and(v >= 10);
    int any = __syncthreads_or(v > 90);
    unsigned int ballot = __ballot_sync(active, v & 1);
    int wany = __any_sync(active, v > 95);
    int wall = __all_sync(active, v < 99);
    int bcast = __shfl_sync(active, v, 3, 8);
    int partner = __shfl_xor_sync(active, v, 1);
    unsigned int same = __match_any_sync(active, v % 4);
    int total = __reduce_add_sync(active, v);
    __syncwarp(active);
    __threadfence_block();
    if (i < n) {
        int *o = out + (size_t)i * 12;
        o[0] = count;
        o[1] = all;
        o[2] = any;
        o[3] = (int)active;
        o[4] = (int)ballot;
        o[5] = wany;
        o[6] = wall;
        o[7] = bcast;
        o[8] = partner;
        o[9] = (int)same;
        o[10] = total;
        o[11] = __popc(ballot) + 100 * __clz(ballot) + 10000 * __ffs((int)ballot);
    }
}
