// 1-D stencil of radius 3 with weights in __constant__ memory: each block loads its slice
// plus a halo of RADIUS on each side into shared memory; zero outside the array.
#define RADIUS 3
#define BLOCK 128

__constant__ float weights[2 * RADIUS + 1] = {0.05f, 0.1f, 0.2f, 0.3f, 0.2f, 0.1f, 0.05f};

extern "C" __global__ void stencil_1d(const float *in, float *out, int n) {
    __shared__ float tile[BLOCK + 2 * RADIUS]; // blockDim.x == BLOCK
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int l = threadIdx.x + RADIUS;
    tile[l] = g < n ? in[g] : 0.0f;
    if (threadIdx.x < RADIUS) {
        int left = g - RADIUS, right = g + BLOCK;
        tile[l - RADIUS] = left >= 0 && left < n ? in[left] : 0.0f;
        tile[l + BLOCK] = right < n ? in[right] : 0.0f;
    }
    __syncthreads();
    if (g < n) {
        float s = 0.0f;
        for (int k = -RADIUS; k <= RADIUS; k++)
            s += weights[k + RADIUS] * tile[l + k];
        out[g] = s;
    }
}
