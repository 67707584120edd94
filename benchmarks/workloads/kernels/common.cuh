/* common.cuh: what every benchmark kernel file shares: the deterministic input generator.
 *
 * Every version of a benchmark (polygpu from Python, Lua and Java, the CUDA C baselines, CuPy)
 * makes its inputs on the device with the init kernels of its .cu file, and the NumPy reference
 * in benchmarks/workloads recomputes the same values bit for bit: an input element is a pure
 * function of its global index and a seed. Values are multiples of 2^-24 so that they are exact
 * in float and double.
 *
 * Kernel files are plain CUDA; a comment of the form  polygpu: <signature>  right before a kernel
 * gives polygpu the access mode of each argument (out: every element written, so no copy in).
 * polygpu's loaders paste this file in place of its #include line; nvcc includes it. */
#ifndef PGB_COMMON_CUH
#define PGB_COMMON_CUH

/* lowbias32 (C. Wellons) of the index mixed with the seed: 32-bit, wraps like NumPy's uint32. */
__device__ __forceinline__ unsigned int pgb_hash(unsigned int i, unsigned int seed) {
    unsigned int h = i ^ (seed * 0x9E3779B9u);
    h ^= h >> 16;
    h *= 0x7FEB352Du;
    h ^= h >> 15;
    h *= 0x846CA68Bu;
    h ^= h >> 16;
    return h;
}

/* Uniform in [0, 1) with 24 random bits: exact in float. */
__device__ __forceinline__ float pgb_uniform(unsigned int i, unsigned int seed) {
    return (float)(pgb_hash(i, seed) >> 8) * 5.9604644775390625e-08f; /* 2^-24 */
}

#endif
