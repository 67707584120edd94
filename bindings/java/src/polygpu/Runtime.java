package polygpu;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A polygpu runtime: a set of devices, the arrays and kernels on them, and the scheduler that
 * runs each kernel launch as soon as the launches it depends on have finished, on the device its
 * policy picks. Every method may be called from any thread.
 *
 * <pre>{@code
 * try (Runtime rt = new Runtime(new Runtime.Options().devices("host:4"))) {
 *     DeviceArray y = rt.array("float32", 1000);
 *     Kernel fill = rt.kernel(SOURCE, "fill");
 *     fill.launch(new Dim3(4), new Dim3(256), y, 1.5f, 1000);
 *     float v = y.getFloat(0); // waits for the launch that wrote y, not for the others
 * }
 * }</pre>
 *
 * <p>{@link #close()} waits for all work and frees every array and kernel of the runtime; it
 * also waits for calls in progress on other threads. A runtime the program drops without closing
 * is closed by a {@link Cleaner} once it and all its arrays and kernels are unreachable. Any call
 * on a closed runtime, or on an array or kernel of one, throws {@link IllegalStateException}.
 */
public final class Runtime implements AutoCloseable {

    /**
     * Options of a runtime: the names of DESIGN.md's configuration, which are those of the C
     * {@code pg_options}, of the Python and Lua keywords and of the {@code PG_<NAME>} environment
     * variables. An option left unset takes its environment variable, else its default.
     * Setters return this object, so calls chain: {@code new Options().devices("host:4")
     * .policy("round-robin")}.
     */
    public static final class Options {
        private final Map<String, String> values = new LinkedHashMap<>();

        /** Options with nothing set: environment variables, else defaults. */
        public Options() {
        }

        /**
         * Sets an option by its C name ({@code "stream_policy"}, {@code "cache_dir"}, ...) from a
         * string, as {@code pg_options_set} reads it. The name is checked when the runtime is
         * created.
         *
         * @param name the option's C name
         * @param value its value as text; {@code null} unsets it
         * @return this
         */
        public Options set(String name, String value) {
            if (name == null)
                throw new ArgumentException("option name must not be null");
            if (value == null)
                values.remove(name);
            else
                values.put(name, value);
            return this;
        }

        /** Options whose value is a path: a boolean there would name a file "on" or "off". */
        private static final java.util.Set<String> PATH_OPTIONS =
                java.util.Set.of("trace", "profile", "cache_dir", "interconnect");

        /**
         * Sets an on/off option ({@code "models"}, {@code "prefetch"}, {@code "elide_copies"})
         * from a boolean: {@code "on"} or {@code "off"}, which every on/off option takes.
         *
         * @param name the option's C name
         * @param value true for on
         * @return this
         * @throws ArgumentException if the option takes a path
         */
        public Options set(String name, boolean value) {
            if (PATH_OPTIONS.contains(name))
                throw new ArgumentException("option " + name + " takes a path, got " + value);
            return set(name, value ? "on" : "off");
        }

        /**
         * The devices to drive.
         *
         * @param v {@code "auto"} (GPUs, else one CPU device), {@code "cuda"}, {@code "cuda:0,2"},
         *          {@code "host:4"} (four CPU devices with separate memories)
         * @return this
         */
        public Options devices(String v) {
            return set("devices", v);
        }

        /**
         * The device policy.
         *
         * @param v {@code "earliest-finish"} (default), {@code "round-robin"},
         *          {@code "stream-aware"}, {@code "min-transfer-size"},
         *          {@code "minmax-transfer-time"}, {@code "min-finish-time"} (uses the
         *          performance models: see {@link #models(String)}), or a name registered from C
         * @return this
         */
        public Options policy(String v) {
            return set("policy", v);
        }

        /**
         * Performance models ({@code models}): whether measured kernel and task durations are
         * kept per device class and size, loaded from and saved to {@code <cache_dir>/models/},
         * and listed by {@link Runtime#models()}.
         *
         * @param v {@code "on"} or {@code "off"}; unset, on with policy {@code "min-finish-time"}
         *          and off otherwise
         * @return this
         */
        public Options models(String v) {
            return set("models", v);
        }

        /**
         * Performance models on or off ({@code models}), as {@link #models(String)} with
         * {@code "on"} or {@code "off"}.
         *
         * @param v true for on
         * @return this
         */
        public Options models(boolean v) {
            return set("models", v);
        }

        /**
         * A power budget ({@code power_limit}): the runtime uses only the devices Czarnul's
         * greedy rule picks — again and again the one with the best performance per watt whose
         * power still fits in what is left — with performance from the performance models when
         * they can compare every device, else nominal throughput (GPUs: SMs x clock; CPU
         * devices: worker threads), and power measured through NVML on GPUs (else given with
         * {@link #powerWatts(String)}). {@link Runtime#powerChoice()} says which. A budget no
         * device fits fails the runtime's creation naming the smallest device power.
         *
         * @param watts watts per node; 0 for none
         * @return this
         * @throws ArgumentException if watts is negative or not finite
         */
        public Options powerLimit(double watts) {
            if (!(watts >= 0) || Double.isInfinite(watts))
                throw new ArgumentException("powerLimit: " + watts
                        + " is not a power budget (watts per node, >= 0; 0 for none)");
            return set("power_limit", Double.toString(watts));
        }

        /**
         * Watts each device draws ({@code power_watts}), for tests and for machines without
         * NVML: used where NVML gives no figure; such a device's energy in {@link Stats} is these
         * watts times its busy time.
         *
         * @param v {@code "120"} (every device) or {@code "0:120,1:80"} (per device)
         * @return this
         */
        public Options powerWatts(String v) {
            return set("power_watts", v);
        }

        /**
         * How a launch without parents gets a stream ({@code stream_policy}).
         *
         * @param v {@code "fifo"} (reuse free streams, default) or {@code "always-new"}
         * @return this
         */
        public Options streamPolicy(String v) {
            return set("stream_policy", v);
        }

        /**
         * How a launch with parents gets a stream ({@code parent_stream_policy}).
         *
         * @param v {@code "same-as-parent"}, {@code "disjoint"}, {@code "multigpu-disjoint"}
         *          (default) or {@code "multigpu-early-disjoint"}
         * @return this
         */
        public Options parentStreamPolicy(String v) {
            return set("parent_stream_policy", v);
        }

        /**
         * Asynchronous execution, or every launch waited for (for debugging).
         *
         * @param v {@code "async"} (default) or {@code "sync"}
         * @return this
         */
        public Options execution(String v) {
            return set("execution", v);
        }

        /**
         * Input copies on a separate copy stream.
         *
         * @param v true to prefetch
         * @return this
         */
        public Options prefetch(boolean v) {
            return set("prefetch", v ? "1" : "0");
        }

        /**
         * A bandwidth matrix file for the transfer-aware policies.
         *
         * @param path path of the CSV file
         * @return this
         */
        public Options interconnect(String path) {
            return set("interconnect", path);
        }

        /**
         * The share of launches minmax-transfer-time spends exploring ({@code
         * exploration_threshold}).
         *
         * @param v in [0, 1], default 0.1
         * @return this
         * @throws ArgumentException if {@code v} is NaN or outside [0, 1] (a negative value
         *         does not mean "the default" here: leave the option unset for that)
         */
        public Options explorationThreshold(double v) {
            if (!(v >= 0.0 && v <= 1.0))
                throw new ArgumentException("explorationThreshold " + v
                        + " is outside [0, 1]: give the share of launches that explore, e.g. 0.1");
            return set("exploration_threshold", Double.toString(v));
        }

        /**
         * Log level on standard error.
         *
         * @param v {@code "off"} (default), {@code "info"} or {@code "debug"}
         * @return this
         */
        public Options log(String v) {
            return set("log", v);
        }

        /**
         * Sharing the machine with this user's other polygpu processes ({@link Node#status()}).
         *
         * @param v {@code "node"} (default: placement sees their work in flight, and a call
         *     whose arrays do not fit beside their memory waits for it) or {@code "off"}
         *     (schedule alone)
         * @return this
         */
        public Options share(String v) {
            return set("share", v);
        }

        /**
         * A Chrome-trace timeline written when the runtime is closed.
         *
         * @param path the JSON file to write
         * @return this
         */
        public Options trace(String path) {
            return set("trace", path);
        }

        /**
         * The compiled-kernel cache ({@code cache_dir}).
         *
         * @param path a folder, default {@code ~/.cache/polygpu}
         * @return this
         */
        public Options cacheDir(String path) {
            return set("cache_dir", path);
        }

        /**
         * Checked mode: {@code "bounds"} puts each CPU device buffer between guard pages, so a
         * kernel that reads or writes past an array's end fails with "out of bounds" instead of
         * changing another array ({@code check}).
         *
         * @param v {@code "off"} (default) or {@code "bounds"}
         * @return this
         */
        public Options check(String v) {
            return set("check", v);
        }

        /**
         * The bytes of device buffers the runtime may hold per device ({@code
         * device_memory_limit}); past it, least recently used copies are evicted, and a launch
         * whose own arrays exceed it fails with {@link OutOfMemoryException}.
         *
         * @param bytes the limit, 0 for none (the default)
         * @return this
         */
        public Options deviceMemoryLimit(long bytes) {
            if (bytes < 0)
                throw new ArgumentException("deviceMemoryLimit: " + bytes + " bytes is negative");
            return set("device_memory_limit", Long.toString(bytes));
        }

        /**
         * The device memory limit as a size ({@code "64M"}, {@code "1.5G"}; binary units).
         *
         * @param size the limit as {@code pg_options_set} reads it
         * @return this
         */
        public Options deviceMemoryLimit(String size) {
            return set("device_memory_limit", size);
        }

        /**
         * The options set so far, by C name.
         *
         * @return an unmodifiable view
         */
        public Map<String, String> values() {
            return Collections.unmodifiableMap(values);
        }
    }

    /**
     * The native runtime and the lock that keeps it alive: every call holds the read lock, so
     * calls run in parallel (none waits for another's device work), and closing takes the write
     * lock, so the runtime is never freed under a call. It holds no reference to the Runtime
     * object, as the Cleaner requires.
     *
     * <p>Closing frees the native runtime at once unless buffers from {@link
     * DeviceArray#asByteBuffer} of its arrays are still reachable ("pinned", see {@link
     * DeviceArray.State}): the native runtime owns their memory, so it then does now what the
     * free would do (end the host views, wait for the work, write the trace), frees the arrays
     * no buffer shows, and frees the rest when the last pinned buffer is collected.
     */
    static final class State implements Runnable {
        final long handle;
        final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
        private volatile boolean closed;
        /** Whether the native runtime was freed; written under the write lock. */
        private boolean freed;
        /** Buffers of its arrays not yet collected, plus host views being taken. */
        final AtomicInteger pins = new AtomicInteger();
        /** Its arrays not yet freed one by one, for a close that must keep some of them. */
        final Set<DeviceArray.State> arrays = ConcurrentHashMap.newKeySet();
        /** The trace file the native free writes, or null: written at a close that waits. */
        private final byte[] trace;

        State(long handle, byte[] trace) {
            this.handle = handle;
            this.trace = trace;
        }

        boolean closed() {
            return closed;
        }

        /** Whether the native runtime was freed; the caller holds the lock. */
        boolean freed() {
            return freed;
        }

        @Override
        public void run() {
            lock.writeLock().lock();
            try {
                if (closed)
                    return;
                closed = true;
                if (pins.get() == 0)
                    free();
                else
                    closeKeepingPinnedArrays();
            } finally {
                lock.writeLock().unlock();
            }
        }

        private void free() {
            freed = true;
            arrays.clear();
            Native.runtimeFree(handle);
        }

        /** What the native free does, but arrays that buffers still show stay allocated. */
        private void closeKeepingPinnedArrays() {
            RuntimeException err = null;
            for (DeviceArray.State a : arrays) {
                try {
                    a.endViewsForClose();
                } catch (RuntimeException e) {
                    err = err == null ? e : err;
                }
            }
            try {
                Native.runtimeSync(handle);
                if (trace != null)
                    Native.traceWrite(handle, trace);
            } catch (RuntimeException e) {
                err = err == null ? e : err;
            }
            for (DeviceArray.State a : arrays) {
                try {
                    a.freeUnlessPinned();
                } catch (RuntimeException e) {
                    err = err == null ? e : err;
                }
            }
            if (err != null)
                throw err;
        }

        /** The last pinned buffer of a closed runtime was collected: free what close left. */
        void lastPinDropped() {
            lock.writeLock().lock();
            try {
                if (closed && !freed && pins.get() == 0)
                    free();
            } finally {
                lock.writeLock().unlock();
            }
        }
    }

    final State state;
    private final Cleaner.Cleanable cleanable;
    private volatile Linalg linalg;

    /** A runtime with every option from its environment variable or its default. */
    public Runtime() {
        this(new Options());
    }

    /**
     * A runtime with the given options.
     *
     * @param options the options; those not set come from the environment or the defaults
     * @throws ArgumentException for an unknown option, policy or bad value
     * @throws DeviceException if the devices cannot be opened
     */
    public Runtime(Options options) {
        Map<String, String> v = options == null ? Map.of() : options.values;
        byte[][] names = new byte[v.size()][];
        byte[][] vals = new byte[v.size()][];
        int i = 0;
        for (Map.Entry<String, String> e : v.entrySet()) {
            names[i] = Native.cstr(e.getKey(), "option name");
            vals[i++] = Native.cstr(e.getValue(), "option " + e.getKey());
        }
        String trace = v.containsKey("trace") ? v.get("trace") : System.getenv("PG_TRACE");
        byte[] tr = trace == null || trace.isEmpty() ? null : Native.cstr(trace, "trace");
        state = new State(Native.runtimeNew(names, vals), tr);
        cleanable = Native.CLEANER.register(this, state);
        if (Native.ranksActive()) {
            RankFailure.install();
        }
    }

    /**
     * On several ranks an uncaught exception ends every rank (the others would wait for this
     * one), as MPI's contract has it: the default handler prints it, then ends the job naming
     * the rank and the exception.
     */
    private static final class RankFailure {
        private static boolean installed;

        static synchronized void install() {
            if (installed) {
                return;
            }
            installed = true;
            Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
            Thread.setDefaultUncaughtExceptionHandler((t, e) -> {
                if (previous != null) {
                    previous.uncaughtException(t, e);
                } else {
                    System.err.print("Exception in thread \"" + t.getName() + "\" ");
                    e.printStackTrace();
                }
                System.err.flush();
                Native.ranksAbort(1, ("uncaught " + e).getBytes(StandardCharsets.UTF_8));
            });
        }
    }

    /** Begins a call: the handle, with the read lock held. */
    long enter() {
        state.lock.readLock().lock();
        if (state.closed()) {
            state.lock.readLock().unlock();
            throw new IllegalStateException("polygpu: the runtime is closed");
        }
        return state.handle;
    }

    /** Ends a call begun with {@link #enter()}. */
    void exit() {
        state.lock.readLock().unlock();
        Reference.reachabilityFence(this);
    }

    /**
     * A new zero-filled array.
     *
     * @param dtype the element type
     * @param shape 1 to 4 positive dimensions, row-major
     * @return the array
     * @throws ArgumentException for a bad shape
     * @throws OutOfMemoryException if no device could hold it
     */
    public DeviceArray array(DType dtype, long... shape) {
        if (dtype == null)
            throw new ArgumentException("dtype must not be null");
        if (shape == null)
            throw new ArgumentException("shape must not be null");
        long h = enter();
        try {
            return new DeviceArray(this, Native.arrayNew(h, dtype.code(), shape.clone()));
        } finally {
            exit();
        }
    }

    /**
     * A new zero-filled array, the element type by name.
     *
     * @param dtype {@code "int8"} .. {@code "uint64"}, {@code "float32"}, {@code "float64"}
     * @param shape 1 to 4 positive dimensions, row-major
     * @return the array
     * @throws ArgumentException for an unknown dtype or a bad shape
     */
    public DeviceArray array(String dtype, long... shape) {
        return array(DType.parse(dtype), shape);
    }

    /**
     * A kernel from CUDA source, its parameters' access modes inferred: {@code const T*} is read
     * only, {@code T*} read and written, scalars by value.
     *
     * @param source CUDA C++ source
     * @param name the {@code __global__} function, or a C++ name expression such as
     *             {@code "axpy<float>"}
     * @return the compiled kernel
     * @throws CompileException if the source does not compile ({@link CompileException#getLog()})
     * @throws NotFoundException if the source has no kernel of that name
     */
    public Kernel kernel(String source, String name) {
        return kernel(source, name, null, null);
    }

    /**
     * Records the kernel launches {@code block} makes on this runtime (nothing runs) as a
     * {@link Graph} to replay with {@link Graph#launch()}.
     *
     * @param block the launches to record; an exception it throws ends the recording, drops it
     *              and is thrown on
     * @return the recorded graph
     * @throws StateException if this runtime is already recording
     */
    public Graph record(Runnable block) {
        if (block == null)
            throw new ArgumentException("record: the block must not be null");
        long h = enter();
        try {
            Native.graphBegin(h);
        } finally {
            exit();
        }
        long g;
        try {
            block.run();
        } catch (RuntimeException | Error e) {
            h = enter();
            try {
                Native.graphFree(Native.graphEnd(h));
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            } finally {
                exit();
            }
            throw e;
        }
        h = enter();
        try {
            g = Native.graphEnd(h);
        } finally {
            exit();
        }
        return new Graph(this, g);
    }

    /**
     * A kernel from CUDA source with an explicit signature.
     *
     * @param source CUDA C++ source
     * @param name the {@code __global__} function
     * @param signature a C parameter list whose pointers may carry {@code in}/{@code out}/
     *                  {@code inout}, e.g. {@code "out float *y, in const float *x, int n"};
     *                  {@code null} to infer it
     * @return the compiled kernel
     * @throws ArgumentException if the signature does not parse
     * @throws CompileException if the source does not compile
     */
    public Kernel kernel(String source, String name, String signature) {
        return kernel(source, name, signature, null);
    }

    /**
     * A kernel from CUDA source with a signature and compiler options.
     *
     * @param source CUDA C++ source
     * @param name the {@code __global__} function
     * @param signature the parameter list, or {@code null} to infer it
     * @param options space-separated compiler options ({@code "-O3 -DN=4"}), or {@code null}
     * @return the compiled kernel
     * @throws ArgumentException if the signature does not parse
     * @throws CompileException if the source does not compile
     * @throws NotFoundException if the source has no kernel of that name
     */
    public Kernel kernel(String source, String name, String signature, String options) {
        return kernel(source, name, signature, options, null);
    }

    /**
     * A kernel that runs on the devices of one class only. In a runtime of GPUs and CPU devices
     * ({@code devices("cuda,host:2")}) it is compiled for each class it may run on (NVRTC, the
     * host compiler) from the same source, and every placement policy chooses among the allowed
     * devices only.
     *
     * @param source CUDA C++ source
     * @param name the {@code __global__} function
     * @param signature the parameter list, or {@code null} to infer it
     * @param options space-separated compiler options, or {@code null}
     * @param where {@code "any"} (or {@code null}: every device), {@code "gpu"} or {@code "cpu"}
     * @return the compiled kernel
     * @throws ArgumentException for a class the runtime has no device of (the message names the
     *                           devices there are), or a where that is none of the three
     * @throws CompileException if the source does not compile
     */
    public Kernel kernel(String source, String name, String signature, String options,
            String where) {
        if (source == null || name == null)
            throw new ArgumentException("kernel source and name must not be null");
        byte[] src = Native.cstr(source, "kernel source");
        byte[] nm = Native.cstr(name, "kernel name");
        byte[] sig = Native.cstr(signature, "signature");
        byte[] opt = Native.cstr(options, "compiler options");
        byte[] wh = Native.cstr(where, "where");
        long h = enter();
        try {
            return new Kernel(this, Native.kernelNew(h, src, nm, sig, opt, wh), name);
        } finally {
            exit();
        }
    }

    /**
     * A built-in task: a library call (BLAS) that the runtime schedules like a kernel, returned as
     * a {@link Kernel} and launched as one (grid and block are ignored). The names are {@code
     * gemm_f32}, {@code gemm_f64}, {@code axpy_f32}, {@code axpy_f64}, {@code dot_f32} and {@code
     * dot_f64}; their arguments are those of {@code pg_task_builtin} in {@code polygpu.h}. {@link
     * #linalg()} wraps them with shapes and dtypes taken from the arrays.
     *
     * @param name the task's name
     * @return the task, as a kernel
     * @throws NotFoundException for an unknown name, or when no device can load its library
     *                           (OpenBLAS on CPU devices, cuBLAS on GPUs)
     * @throws ArgumentException if the runtime's devices cannot run tasks (the simulator)
     */
    public Kernel task(String name) {
        if (name == null)
            throw new ArgumentException("task name must not be null");
        byte[] nm = Native.cstr(name, "task name");
        long h = enter();
        try {
            return new Kernel(this, Native.taskBuiltin(h, nm), name);
        } finally {
            exit();
        }
    }

    /**
     * BLAS calls on this runtime's arrays ({@link Linalg}): one object per runtime, which makes
     * each task once.
     *
     * @return the runtime's {@link Linalg}
     */
    public Linalg linalg() {
        Linalg l = linalg;
        if (l == null) {
            synchronized (this) {
                l = linalg;
                if (l == null)
                    linalg = l = new Linalg(this);
            }
        }
        return l;
    }

    /**
     * Blocks until every launch and host access submitted so far has finished. Like every wait of
     * the runtime (a host read, a view), it ends early with {@link WaitInterruptedException} when
     * the thread is interrupted; the work goes on.
     */
    public void sync() {
        long h = enter();
        try {
            Native.runtimeSync(h);
        } finally {
            exit();
        }
    }

    /**
     * {@link #sync()} for at most the given time.
     *
     * @param timeout how long to wait at most (0 or more)
     * @param unit the unit of {@code timeout}
     * @throws WaitTimeoutException if work is still running then (it goes on; nothing is
     *         cancelled)
     * @throws ArgumentException if {@code timeout} is negative
     */
    public void sync(long timeout, java.util.concurrent.TimeUnit unit) {
        if (timeout < 0)
            throw new ArgumentException("sync: timeout must be 0 or more, got " + timeout);
        long ns = unit.toNanos(timeout);
        long h = enter();
        try {
            Native.runtimeSyncTimeout(h, ns);
        } finally {
            exit();
        }
    }

    /**
     * Seconds since the runtime was created: real time, or on simulated devices
     * ({@code devices("sim:MACHINE")}) the simulated machine's virtual time, so a program timing
     * itself between two readings (after a sync or a read) measures what that machine would take.
     *
     * @return the runtime's clock in seconds
     */
    public double clock() {
        long h = enter();
        try {
            return Native.runtimeClock(h) * 1e-9;
        } finally {
            exit();
        }
    }

    /**
     * This process's rank: under {@code mpirun} every rank runs the same program (option {@code
     * ranks}; README, "More than one machine"). Each array has an owner rank ({@link
     * DeviceArray#setOwner(int)}), a kernel runs on the rank owning what it writes, and values
     * move between ranks as the program needs them.
     *
     * @return the rank, from 0 (0 single-process)
     */
    public int rank() {
        long h = enter();
        try {
            return Native.runtimeRanks(h)[0];
        } finally {
            exit();
        }
    }

    /**
     * The number of ranks.
     *
     * @return the number of ranks (1 single-process)
     */
    public int nranks() {
        long h = enter();
        try {
            return Native.runtimeRanks(h)[1];
        } finally {
            exit();
        }
    }

    /**
     * The runtime's counters now.
     *
     * @return a snapshot
     */
    public Stats stats() {
        long h = enter();
        try {
            return new Stats(Native.runtimeStats(h), Native.MAX_LOCATIONS);
        } finally {
            exit();
        }
    }

    /**
     * The devices the power budget (option {@code power_limit}) lets this runtime use, chosen
     * when it was created by Czarnul's greedy rule; kernels run only there.
     *
     * @return the choice, with each device's power and performance figures
     */
    public PowerChoice powerChoice() {
        long h = enter();
        try {
            return new PowerChoice(Native.runtimePowerChoice(h), Native.MAX_LOCATIONS - 1);
        } finally {
            exit();
        }
    }

    /**
     * The devices this runtime drives, by id.
     *
     * @return an unmodifiable list
     */
    public List<Device> devices() {
        Object[] raw;
        long h = enter();
        try {
            raw = Native.runtimeDevices(h);
        } finally {
            exit();
        }
        long[] n = (long[]) raw[0];
        String[] names = (String[]) raw[1];
        List<Device> out = new ArrayList<>(names.length);
        for (int i = 0; i < names.length; i++) {
            int b = i * 14; /* the field order of jni_runtime.c's runtimeDevices */
            out.add(new Device((int) n[b], n[b + 1] == 1 ? Device.Kind.CUDA : Device.Kind.CPU,
                    names[i], n[b + 2], (int) n[b + 3], (int) n[b + 4], (int) n[b + 5],
                    (int) n[b + 6], new Dim3((int) n[b + 7], (int) n[b + 8], (int) n[b + 9]),
                    new Dim3((int) n[b + 10], (int) n[b + 11], (int) n[b + 12]), n[b + 13]));
        }
        return Collections.unmodifiableList(out);
    }

    /**
     * The performance models known now: loaded from {@code <cache_dir>/models/} when the runtime
     * was created and learned from the kernels and tasks measured since (option {@code models},
     * on by default with policy {@code "min-finish-time"}). They are saved back when the runtime
     * is closed.
     *
     * @return an unmodifiable list, one {@link Model} per kernel, device class and size bucket;
     *     empty when models are off
     */
    public List<Model> models() {
        Object[] raw;
        long h = enter();
        try {
            raw = Native.runtimeModels(h);
        } finally {
            exit();
        }
        long[] n = (long[]) raw[0];
        String[] kernels = (String[]) raw[1];
        String[] classes = (String[]) raw[2];
        List<Model> out = new ArrayList<>(kernels.length);
        for (int i = 0; i < kernels.length; i++) {
            int b = i * 3; /* the field order of jni_runtime.c's runtimeModels */
            out.add(new Model(kernels[i], classes[i], n[b], n[b + 1], (int) n[b + 2]));
        }
        return Collections.unmodifiableList(out);
    }

    /**
     * A snapshot of the DAG of the most recent computations, as objects: its vertices (kernel
     * launches, host accesses, copies, each with its device, stream, arrays and timing) and
     * the dependencies between them.
     *
     * @return the snapshot: later work does not change it, and it outlives {@link #close()}
     */
    public Dag dagSnapshot() {
        Object[] raw;
        long h = enter();
        try {
            raw = Native.dagSnapshot(h);
        } finally {
            exit();
        }
        return Dag.fromNative(raw);
    }

    /**
     * The DAG of the most recent computations as JSON text (the export format; see
     * {@link #dagSnapshot()} for objects): {@code {"vertices": [{"id", "kind", "name",
     * "device", "stream", "args", "submit_ns", "start_ns", "end_ns"}...], "edges": [[parent,
     * child] ...]}}.
     *
     * @return the JSON text
     */
    public String dag() {
        long h = enter();
        try {
            return Native.dagString(h, 1);
        } finally {
            exit();
        }
    }

    /**
     * The DAG of the most recent computations in Graphviz DOT.
     *
     * @return the DOT text
     */
    public String dagDot() {
        long h = enter();
        try {
            return Native.dagString(h, 0);
        } finally {
            exit();
        }
    }

    /**
     * Writes the DAG to a file: JSON if the path ends in {@code .json}, else Graphviz DOT.
     *
     * @param path the file to write
     * @throws PolygpuException ({@code PG_ERROR_IO}) if it cannot be written
     */
    public void exportDag(String path) {
        byte[] p = Native.cstr(path, "path");
        if (p == null)
            throw new ArgumentException("path must not be null");
        int format = path.toLowerCase(java.util.Locale.ROOT).endsWith(".json") ? 1 : 0;
        long h = enter();
        try {
            Native.dagExport(h, format, p);
        } finally {
            exit();
        }
    }

    /**
     * Writes a Chrome-trace JSON timeline (opens in Perfetto): one track per device stream.
     *
     * @param path the file to write
     * @throws PolygpuException ({@code PG_ERROR_IO}) if it cannot be written
     */
    public void writeTrace(String path) {
        byte[] p = Native.cstr(path, "path");
        if (p == null)
            throw new ArgumentException("path must not be null");
        long h = enter();
        try {
            Native.traceWrite(h, p);
        } finally {
            exit();
        }
    }

    /**
     * Whether {@link #close()} has run.
     *
     * @return true once closed
     */
    public boolean isClosed() {
        return state.closed();
    }

    /**
     * Waits for all work, writes the trace if one was asked for, and frees the runtime with every
     * array and kernel still open: their host views are released and every later call on them
     * throws {@link IllegalStateException}. While buffers from {@link DeviceArray#asByteBuffer}
     * of its arrays are still reachable, the memory they show, and the native runtime that owns
     * it (with its devices and kernels), is freed only once they have been collected; the other
     * arrays are freed now. Closing again does nothing.
     *
     * @throws PolygpuException if waiting for the work or writing the trace failed; the runtime
     *         is closed anyway
     */
    @Override
    public void close() {
        cleanable.clean();
    }
}
