package polygpu;

import java.util.HashMap;
import java.util.Map;

/**
 * BLAS calls as tasks of a {@link Runtime} (the built-in tasks of {@link Runtime#task(String)}):
 * each call is scheduled like a kernel launch. It runs once the arrays it reads hold their current
 * value on the device chosen for it, later launches that read what it writes wait for it, and it
 * returns at once. CPU devices run OpenBLAS (Debian: {@code apt-get install libopenblas0-pthread};
 * the environment variable {@code PG_BLAS_LIB} names another CBLAS library), GPUs cuBLAS. Arrays
 * are row-major; all arrays of a call have one dtype, {@link DType#FLOAT32} or {@link
 * DType#FLOAT64}, which picks the task ({@code axpy_f32} or {@code axpy_f64}, ...). gemm is the
 * tiled GEMM over the runtime's devices ({@link GemmOptions}, {@link GemmReport}).
 *
 * <pre>{@code
 * DeviceArray a = rt.array(DType.FLOAT32, 64, 32), b = rt.array(DType.FLOAT32, 32, 16);
 * DeviceArray c = rt.array(DType.FLOAT32, 64, 16);
 * rt.linalg().gemm(a, b, c);                 // c = a * b
 * }</pre>
 *
 * <p>Bad arguments (mixed dtypes, a dtype other than float32/float64, shapes that do not fit)
 * throw {@link ArgumentException} naming the problem and launch nothing. Get the runtime's
 * instance with {@link Runtime#linalg()}; its tasks are freed with the runtime.
 */
public final class Linalg {
    /** Tasks ignore grid and block. */
    private static final Dim3 ONE = new Dim3(1);

    private final Runtime runtime;
    private final Map<String, Kernel> tasks = new HashMap<>();

    Linalg(Runtime runtime) {
        this.runtime = runtime;
    }

    /**
     * The runtime the calls are made on.
     *
     * @return the runtime
     */
    public Runtime runtime() {
        return runtime;
    }

    /**
     * {@code c = a * b}: {@link #gemm(DeviceArray, DeviceArray, DeviceArray, double, double,
     * boolean, boolean)} with alpha 1, beta 0 and no transposes.
     *
     * @param a an m x k matrix
     * @param b a k x n matrix
     * @param c the m x n result (its old value is not read)
     * @throws ArgumentException for mixed or unsupported dtypes, non-2-D arrays or shapes that do
     *                           not fit
     * @throws IllegalStateException if an array or the runtime is closed
     */
    public void gemm(DeviceArray a, DeviceArray b, DeviceArray c) {
        gemm(a, b, c, 1.0, 0.0, false, false);
    }

    /**
     * {@code c = alpha * op(a) * op(b) + beta * c}, where op transposes its matrix when transA /
     * transB is true: {@link #gemm(DeviceArray, DeviceArray, DeviceArray, GemmOptions)} with
     * these options and every device.
     *
     * @param a the left matrix
     * @param b the right matrix
     * @param c the result, read too unless beta is 0
     * @param alpha the product's factor
     * @param beta c's factor
     * @param transA whether to use a transposed
     * @param transB whether to use b transposed
     * @throws ArgumentException for mixed or unsupported dtypes, non-2-D arrays or shapes that do
     *                           not fit
     * @throws IllegalStateException if an array or the runtime is closed
     */
    public void gemm(DeviceArray a, DeviceArray b, DeviceArray c, double alpha, double beta,
            boolean transA, boolean transB) {
        gemm(a, b, c, new GemmOptions().alpha(alpha).beta(beta).transA(transA).transB(transB));
    }

    /**
     * {@code c = alpha * op(a) * op(b) + beta * c} tiled over devices: a, b and c are 2-D arrays
     * of one dtype, of any size and wherever their values are (host or any device): op(a) is m x
     * k (a is stored m x k, or k x m when transA), op(b) is k x n, c is m x n. C is cut into tiles
     * of rows, each a task on the device a model of the links and of each device's GEMM rate
     * assigns it (pg_linalg_gemm in polygpu.h): b goes once to each device used, a tile's rows of
     * a come while the tile before computes, and each tile of c goes back to where c was while
     * the next computes. Returns at once; c is current once the tiles ran.
     *
     * @param a the left matrix
     * @param b the right matrix
     * @param c the result
     * @param options alpha, beta, transposes, devices, tile and metric (not null)
     * @return the model's plan
     * @throws ArgumentException for mixed or unsupported dtypes, non-2-D arrays, shapes that do
     *                           not fit, an unknown device, a tile that needs more than 32 tiles,
     *                           or metric EDP without power readings
     * @throws IllegalStateException if an array or the runtime is closed
     */
    public GemmReport gemm(DeviceArray a, DeviceArray b, DeviceArray c, GemmOptions options) {
        if (options == null)
            throw new ArgumentException("gemm: options must not be null");
        suffix("gemm", new String[] {"a", "b", "c"}, a, b, c);
        long[] sa = matrix("a", a), sb = matrix("b", b), sc = matrix("c", c);
        boolean transA = options.transA, transB = options.transB;
        long m = sc[0], n = sc[1];
        long mA = transA ? sa[1] : sa[0], k = transA ? sa[0] : sa[1];
        long kB = transB ? sb[1] : sb[0], nB = transB ? sb[0] : sb[1];
        if (mA != m || nB != n || kB != k)
            throw new ArgumentException("gemm: shapes do not fit: op(a) is " + mA + " x " + k
                    + ", op(b) " + kB + " x " + nB + ", c " + m + " x " + n
                    + " (op(a) must be m x k, op(b) k x n, c m x n)");
        int ndev = runtime.devices().size(), mask = 0;
        if (options.devices != null) {
            if (options.devices.length == 0)
                throw new ArgumentException("gemm: devices is empty: name at least one device");
            for (int d : options.devices) {
                if (d < 0 || d >= ndev)
                    throw new ArgumentException("gemm: device " + d
                            + " does not exist (this runtime has devices 0 to " + (ndev - 1) + ")");
                mask |= 1 << d;
            }
        }
        if (options.tile < 0)
            throw new ArgumentException("gemm: tile must be a positive number of rows, or 0 for "
                    + "the model's choice; got " + options.tile);
        double[] raw;
        long h = runtime.enter();
        try {
            raw = Native.linalgGemm(h, a.launchHandle(), b.launchHandle(), c.launchHandle(),
                    options.alpha, options.beta, transA, transB, mask, options.tile,
                    options.metric == GemmOptions.Metric.EDP ? 1 : 0);
        } finally {
            runtime.exit();
            java.lang.ref.Reference.reachabilityFence(a);
            java.lang.ref.Reference.reachabilityFence(b);
            java.lang.ref.Reference.reachabilityFence(c);
        }
        return new GemmReport(raw, Native.MAX_LOCATIONS - 1);
    }

    /**
     * {@code y = alpha * x + y} over x's {@link DeviceArray#length()} elements (y has at least as
     * many; any shapes).
     *
     * @param alpha x's factor
     * @param x the array added
     * @param y the array updated
     * @throws ArgumentException for mixed or unsupported dtypes, or a y shorter than x
     * @throws IllegalStateException if an array or the runtime is closed
     */
    public void axpy(double alpha, DeviceArray x, DeviceArray y) {
        String suffix = suffix("axpy", new String[] {"x", "y"}, x, y);
        if (y.length() < x.length())
            throw new ArgumentException("axpy: y has " + y.length() + " elements, fewer than x's "
                    + x.length());
        launch("axpy" + suffix, x, y, x.length(), alpha);
    }

    /**
     * {@code out[0] = x . y}, the dot product of x and y (of one length); out has at least one
     * element and the dtype of x and y.
     *
     * @param x the first vector
     * @param y the second vector
     * @param out receives the result in element 0
     * @throws ArgumentException for mixed or unsupported dtypes, or x and y of different lengths
     * @throws IllegalStateException if an array or the runtime is closed
     */
    public void dot(DeviceArray x, DeviceArray y, DeviceArray out) {
        String suffix = suffix("dot", new String[] {"x", "y", "out"}, x, y, out);
        if (x.length() != y.length())
            throw new ArgumentException("dot: x has " + x.length() + " elements and y "
                    + y.length() + ": they must be equal");
        launch("dot" + suffix, x, y, out, x.length());
    }

    /** The task suffix for the arrays' one dtype; null, mixed or unsupported dtypes throw. */
    private static String suffix(String fn, String[] names, DeviceArray... arrays) {
        for (int i = 0; i < arrays.length; i++)
            if (arrays[i] == null)
                throw new ArgumentException(fn + ": " + names[i] + " must not be null");
        DType dt = arrays[0].dtype();
        for (DeviceArray a : arrays)
            if (a.dtype() != dt) {
                StringBuilder s = new StringBuilder(fn + ": the arrays must have one dtype, got ");
                for (int i = 0; i < arrays.length; i++)
                    s.append(i == 0 ? "" : ", ").append(names[i]).append(' ')
                            .append(arrays[i].dtype().typeName());
                throw new ArgumentException(s.toString());
            }
        if (dt == DType.FLOAT32)
            return "_f32";
        if (dt == DType.FLOAT64)
            return "_f64";
        throw new ArgumentException(fn + ": arrays of float32 or float64 are supported, got "
                + dt.typeName());
    }

    private static long[] matrix(String name, DeviceArray a) {
        long[] s = a.shape();
        if (s.length != 2)
            throw new ArgumentException("gemm: " + name + " must be a 2-D array, got shape "
                    + java.util.Arrays.toString(s));
        return s;
    }

    /** Launches the runtime's task {@code name}, made on first use. */
    private void launch(String name, Object... args) {
        Kernel k;
        synchronized (tasks) {
            k = tasks.get(name);
            if (k == null || k.isClosed()) {
                k = runtime.task(name);
                tasks.put(name, k);
            }
        }
        k.launch(ONE, ONE, args);
    }
}
