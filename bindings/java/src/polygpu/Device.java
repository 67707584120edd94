package polygpu;

/**
 * One device a {@link Runtime} drives, as reported by {@link Runtime#devices()}.
 *
 * @param id the device id used in the DAG and trace (0 .. n-1)
 * @param kind {@link Kind#CPU} for a CPU device, {@link Kind#CUDA} for a GPU
 * @param name the device's name
 * @param memoryBytes total memory of the device in bytes
 * @param computeMajor CUDA compute capability, major (0 on CPU devices)
 * @param computeMinor CUDA compute capability, minor (0 on CPU devices)
 * @param multiprocessors SMs on a GPU, worker threads on a CPU device
 * @param maxThreadsPerBlock the most threads one block may have (x * y * z): a launch goes only
 *        to devices whose limits it fits, and fails naming them when none does
 * @param maxBlock the largest block in each dimension
 * @param maxGrid the largest grid in each dimension, in blocks
 * @param maxSharedMemoryPerBlock bytes of dynamic shared memory a block may ask for (GPUs: the
 *        opt-in maximum). CPU devices allow more than GPUs: 8192 threads per block in any shape
 *        and 64 MiB of shared memory
 */
public record Device(int id, Kind kind, String name, long memoryBytes, int computeMajor,
        int computeMinor, int multiprocessors, int maxThreadsPerBlock, Dim3 maxBlock,
        Dim3 maxGrid, long maxSharedMemoryPerBlock) {

    /** What a device is, as the C enum {@code pg_device_kind}. */
    public enum Kind {
        /** A CPU device: kernels compiled with the host C++ compiler, run by worker threads. */
        CPU,
        /** A CUDA GPU. */
        CUDA
    }
}
