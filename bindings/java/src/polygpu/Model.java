package polygpu;

/**
 * One performance model, as reported by {@link Runtime#models()}: the measured durations of a
 * kernel or task on one device class at one size bucket. Immutable: a snapshot of the model
 * when {@code models()} was called.
 *
 * @param kernel the kernel's or task's name
 * @param deviceClass the device's name ({@link Device#name()}), e.g. {@code "NVIDIA H200"};
 *        CPU devices: {@code "CPU device (N threads)"}, without the index
 * @param bytes the size bucket: bytes of the array arguments, rounded down to a power of two
 *        (0: none)
 * @param medianNs the median of the kept samples in nanoseconds (0 while none is kept)
 * @param samples samples kept: the last 32 at most; the first of each bucket in a process is
 *        dropped (warm-up), as is one over 10x the median (a spike). A prediction needs 3
 */
public record Model(String kernel, String deviceClass, long bytes, long medianNs, int samples) {
}
