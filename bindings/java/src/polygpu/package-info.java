/**
 * polygpu from Java: run CUDA kernels written as source strings on every GPU of a machine, or on
 * CPU devices ({@code devices("host:4")}), with the scheduling done by the runtime. A {@link
 * polygpu.Runtime} creates {@link polygpu.DeviceArray}s and {@link polygpu.Kernel}s; a launch
 * returns at once, and the runtime orders it after the launches it depends on (from each array
 * argument's access mode), picks a device and stream with its policies, and copies data only
 * where needed. Errors are {@link polygpu.PolygpuException}s.
 */
package polygpu;
