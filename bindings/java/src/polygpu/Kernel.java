package polygpu;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A compiled kernel of a {@link Runtime}. A launch returns as soon as it is scheduled: the
 * runtime orders it after the launches and host accesses it depends on (from each array
 * argument's access mode) and runs it on the device its policy picks.
 *
 * <p>Arguments, in the order of the kernel's parameters: a {@link DeviceArray} for a pointer
 * parameter; an {@link Integer}, {@link Long}, {@link Short}, {@link Byte}, {@link Float} or
 * {@link Double} (or a {@link Boolean}, as 0 or 1) for a scalar one, converted by the runtime to
 * the parameter's type and checked to fit (a value that does not fit, a float for an integer
 * parameter, a wrong count or kind throws {@link ArgumentException} and launches nothing).
 *
 * <pre>{@code
 * k.launch(new Dim3(4), new Dim3(256), y, x, 1000);
 * k.configure(new Dim3(4), new Dim3(256)).launch(y, x, 1000);
 * }</pre>
 *
 * <p>{@link #close()} frees the kernel (launches already submitted still run); a kernel the
 * program drops is freed by a {@link Cleaner}. Calls on a closed kernel, or on a kernel of a
 * closed runtime, throw {@link IllegalStateException}.
 */
public final class Kernel implements AutoCloseable {

    /** The native kernel; no reference to the Kernel object, as the Cleaner requires. */
    static final class State implements Runnable {
        final Runtime.State rt;
        final long handle;
        final AtomicBoolean closed = new AtomicBoolean();

        State(Runtime.State rt, long handle) {
            this.rt = rt;
            this.handle = handle;
        }

        @Override
        public void run() {
            rt.lock.readLock().lock();
            try {
                if (closed.getAndSet(true) || rt.closed())
                    return; /* a closed runtime freed its kernels itself */
                Native.kernelFree(handle);
            } finally {
                rt.lock.readLock().unlock();
            }
        }
    }

    /**
     * A kernel with its grid, block and dynamic shared memory fixed, as returned by {@link
     * Kernel#configure(Dim3, Dim3, long)}: GrCUDA's {@code k(grid, block)(args...)}.
     */
    public static final class Launcher {
        private final Kernel kernel;
        private final Dim3 grid, block;
        private final long sharedMem;

        Launcher(Kernel kernel, Dim3 grid, Dim3 block, long sharedMem) {
            this.kernel = kernel;
            this.grid = grid;
            this.block = block;
            this.sharedMem = sharedMem;
        }

        /**
         * Submits a launch with this configuration.
         *
         * @param args the kernel's arguments, see {@link Kernel}
         * @throws ArgumentException for a wrong count, kind or value of argument
         * @throws IllegalStateException if the kernel, its runtime or an array argument is closed
         */
        public void launch(Object... args) {
            kernel.launch(grid, block, sharedMem, args);
        }
    }

    /** Keeps the runtime reachable (and so open) while this kernel is. */
    private final Runtime runtime;
    private final State state;
    private final Cleaner.Cleanable cleanable;
    private final String name;

    Kernel(Runtime runtime, long handle, String name) {
        this.runtime = runtime;
        this.state = new State(runtime.state, handle);
        this.cleanable = Native.CLEANER.register(this, state);
        this.name = name;
    }

    /**
     * The kernel's name as given to {@link Runtime#kernel(String, String)}.
     *
     * @return the name
     */
    public String name() {
        return name;
    }

    /**
     * Fixes grid and block for launches, without dynamic shared memory.
     *
     * @param grid blocks in the grid
     * @param block threads per block
     * @return a launcher
     */
    public Launcher configure(Dim3 grid, Dim3 block) {
        return configure(grid, block, 0);
    }

    /**
     * Fixes grid, block and bytes of dynamic shared memory for launches.
     *
     * @param grid blocks in the grid
     * @param block threads per block
     * @param sharedMem bytes of dynamic shared memory per block
     * @return a launcher
     * @throws ArgumentException if grid or block is null or sharedMem negative
     */
    public Launcher configure(Dim3 grid, Dim3 block, long sharedMem) {
        checkConfig(grid, block, sharedMem);
        return new Launcher(this, grid, block, sharedMem);
    }

    /**
     * Submits a launch and returns once it is scheduled.
     *
     * @param grid blocks in the grid
     * @param block threads per block
     * @param args the kernel's arguments, see {@link Kernel}
     * @throws ArgumentException for a wrong count, kind or value of argument or a bad grid/block
     * @throws IllegalStateException if the kernel, its runtime or an array argument is closed
     */
    public void launch(Dim3 grid, Dim3 block, Object... args) {
        launch(grid, block, 0, args);
    }

    /**
     * Whether launches of this kernel run as one part per device, each over a contiguous range
     * of the grid's blocks (the runtime's option {@code split}, per kernel). A kernel can be
     * split when its signature says what each thread block writes of every array it writes,
     * e.g. {@code "out(chunks=blocks) float *y, in(chunks=blocks) const float *x, int n"}.
     *
     * @param mode {@code "auto"} (split where the signature, the devices and the grid allow),
     *     {@code "on"} (as auto, and a launch that cannot be split throws), {@code "off"}, or
     *     {@code "default"} (the runtime's option)
     * @return this kernel
     * @throws ArgumentException for an unknown mode, or "on" for a kernel whose signature does not
     *     say what its blocks write
     */
    public Kernel split(String mode) {
        if (mode == null)
            throw new ArgumentException("split mode must not be null");
        long h = enter();
        try {
            Native.kernelSplit(h, mode.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        } finally {
            exit();
        }
        return this;
    }

    private static void checkConfig(Dim3 grid, Dim3 block, long sharedMem) {
        if (grid == null || block == null)
            throw new ArgumentException("grid and block must not be null");
        if (sharedMem < 0)
            throw new ArgumentException("dynamic shared memory " + sharedMem + " is negative");
    }

    void launch(Dim3 grid, Dim3 block, long sharedMem, Object[] args) {
        checkConfig(grid, block, sharedMem);
        if (args == null)
            args = new Object[] {null};
        int n = args.length;
        int[] kinds = new int[n];
        long[] values = new long[n];
        long h = enter();
        try {
            for (int i = 0; i < n; i++) {
                Object a = args[i];
                if (a instanceof DeviceArray) {
                    kinds[i] = Native.ARG_ARRAY;
                    values[i] = ((DeviceArray) a).launchHandle();
                } else if (a instanceof Integer || a instanceof Long || a instanceof Short
                        || a instanceof Byte) {
                    kinds[i] = Native.ARG_INT;
                    values[i] = ((Number) a).longValue();
                } else if (a instanceof Boolean) {
                    kinds[i] = Native.ARG_INT;
                    values[i] = (Boolean) a ? 1 : 0;
                } else if (a instanceof Float) {
                    kinds[i] = Native.ARG_FLOAT;
                    values[i] = Double.doubleToRawLongBits((Float) a);
                } else if (a instanceof Double) {
                    kinds[i] = Native.ARG_DOUBLE;
                    values[i] = Double.doubleToRawLongBits((Double) a);
                } else {
                    throw new ArgumentException("kernel '" + name + "' argument " + (i + 1)
                            + ": " + (a == null ? "null" : "a " + a.getClass().getName())
                            + " cannot be passed; use a DeviceArray, Integer, Long, Short, Byte,"
                            + " Boolean, Float or Double");
                }
            }
            Native.kernelLaunch(h, grid.x, grid.y, grid.z, block.x, block.y, block.z, sharedMem,
                    kinds, values);
        } finally {
            exit();
            Reference.reachabilityFence(args);
        }
    }

    private long enter() {
        runtime.enter();
        if (state.closed.get()) {
            runtime.exit();
            throw new IllegalStateException("polygpu: the kernel is closed");
        }
        return state.handle;
    }

    private void exit() {
        runtime.exit();
        Reference.reachabilityFence(this);
    }

    /**
     * Whether {@link #close()} has run on this kernel or its runtime.
     *
     * @return true once closed
     */
    public boolean isClosed() {
        return state.closed.get() || state.rt.closed();
    }

    /** Frees the kernel; launches already submitted still run. Closing again does nothing. */
    @Override
    public void close() {
        cleanable.clean();
    }

    /**
     * Describes the kernel.
     *
     * @return e.g. {@code "Kernel(axpy)"}
     */
    @Override
    public String toString() {
        return "Kernel(" + name + ")";
    }
}
