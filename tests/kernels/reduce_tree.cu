// Shared-memory tree reduction: each thread sums a grid-stride slice, then the block halves
// its partial sums in dynamic shared memory; one partial per block. A template, so the name
// expression "reduce_tree<float>" is exercised too.
template <typename T>
__global__ void reduce_tree(const T *__restrict__ x, T *partial, int n) {
    extern __shared__ __align__(sizeof(T)) unsigned char smem[];
    T *s = reinterpret_cast<T *>(smem);
    unsigned int tid = threadIdx.x;
    T v = 0;
    for (int i = blockIdx.x * blockDim.x + tid; i < n; i += gridDim.x * blockDim.x)
        v += x[i];
    s[tid] = v;
    __syncthreads();
    for (unsigned int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (tid < k)
            s[tid] += s[tid + k];
        __syncthreads();
    }
    if (tid == 0)
        partial[blockIdx.x] = s[0];
}
