/**
 * polygpu from Java: run CUDA kernels written as source strings on every GPU of a machine, or on
 * CPU devices ({@code devices("host:4")}), with the scheduling done by the runtime. A {@link
 * polygpu.Runtime} creates {@link polygpu.DeviceArray}s and {@link polygpu.Kernel}s; a launch
 * returns at once, and the runtime orders it after the launches it depends on (from each array
 * argument's access mode), picks a device and stream with its policies, and copies data only
 * where needed. Errors are {@link polygpu.PolygpuException}s.
 *
 * <p>A kernel that faults on a CPU device (a wild pointer, a trap) throws {@link
 * polygpu.DeviceException} where its result is used, and the JVM goes on: the native library
 * installs signal handlers that catch faults of its own device threads and pass every other
 * signal to the JVM's handlers. Under {@code -Xcheck:jni} the JVM reports those handlers as
 * "modified"; preloading the JDK's {@code libjsig.so} makes that chaining official.
 */
package polygpu;
