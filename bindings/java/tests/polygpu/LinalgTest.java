package polygpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Linalg (gemm, axpy, dot as tasks of the runtime; OpenBLAS on CPU devices) against naive
 * references computed here, ordering with kernels before and after, and argument errors that
 * name the problem and leave the runtime usable.
 */
class LinalgTest {
    Runtime rt;
    Linalg la;

    @BeforeEach
    void setUp() {
        String devices = System.getenv("PG_TEST_DEVICES");
        rt = new Runtime(new Runtime.Options().devices(devices != null ? devices : "host:2"));
        la = rt.linalg();
    }

    @AfterEach
    void tearDown() {
        rt.close();
    }

    /** Deterministic values in [-1, 1), exact in float32 (multiples of 1/1024). */
    static double val(long i, long seed) {
        return ((i * 2654435761L + seed * 40503L) % 2048) / 1024.0 - 1.0;
    }

    static double[] values(int n, long seed) {
        double[] v = new double[n];
        for (int i = 0; i < n; i++)
            v[i] = val(i + 1, seed);
        return v;
    }

    static void put(DeviceArray a, double[] v) {
        if (a.dtype() == DType.FLOAT64) {
            a.copyFrom(v);
            return;
        }
        float[] f = new float[v.length];
        for (int i = 0; i < v.length; i++)
            f[i] = (float) v[i];
        a.copyFrom(f);
    }

    static double[] get(DeviceArray a) {
        int n = (int) a.length();
        double[] v = new double[n];
        if (a.dtype() == DType.FLOAT64) {
            a.copyTo(v);
            return v;
        }
        float[] f = new float[n];
        a.copyTo(f);
        for (int i = 0; i < n; i++)
            v[i] = f[i];
        return v;
    }

    static void close(double got, double want, DType dt, String what) {
        double tol = dt == DType.FLOAT64 ? 1e-10 : 1e-4;
        if (Math.abs(got - want) > tol * (1 + Math.abs(want)))
            fail(what + ": got " + got + ", want " + want);
    }

    /** C = alpha op(A) op(B) + beta C, naive, row-major. */
    static double[] gemmRef(int m, int n, int k, boolean ta, boolean tb, double alpha, double[] a,
            double[] b, double beta, double[] c) {
        double[] r = new double[m * n];
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                double s = 0;
                for (int p = 0; p < k; p++)
                    s += (ta ? a[p * m + i] : a[i * k + p]) * (tb ? b[j * k + p] : b[p * n + j]);
                r[i * n + j] = alpha * s + beta * c[i * n + j];
            }
        return r;
    }

    @Test
    void gemmMatchesANaiveReferenceForShapesAndAllTransposes() {
        int[][] shapes = {{1, 1, 1}, {3, 5, 7}, {17, 4, 9}, {33, 20, 12}};
        int checked = 0;
        for (DType dt : new DType[] {DType.FLOAT32, DType.FLOAT64})
            for (int s = 0; s < shapes.length; s++)
                for (int t = 0; t < 4; t++) {
                    int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
                    boolean ta = (t & 1) != 0, tb = (t & 2) != 0;
                    double alpha = 1.5, beta = s % 2 == 0 ? -0.5 : 0.0;
                    double[] a = values(m * k, s), b = values(k * n, 100 + s),
                            c = values(m * n, 200 + s);
                    try (DeviceArray A = rt.array(dt, ta ? k : m, ta ? m : k);
                         DeviceArray B = rt.array(dt, tb ? n : k, tb ? k : n);
                         DeviceArray C = rt.array(dt, m, n)) {
                        put(A, a);
                        put(B, b);
                        put(C, c);
                        la.gemm(A, B, C, alpha, beta, ta, tb);
                        double[] want = gemmRef(m, n, k, ta, tb, alpha, a, b, beta, c);
                        double[] got = get(C);
                        for (int i = 0; i < m * n; i++)
                            close(got[i], want[i], dt, "gemm " + dt + " m=" + m + " n=" + n
                                    + " k=" + k + " ta=" + ta + " tb=" + tb + " [" + i + "]");
                        checked++;
                    }
                }
        assertEquals(32, checked);
    }

    @Test
    void gemmShortFormAndTheTaskItself() {
        double[] a = values(12, 1), b = values(15, 2), c = values(20, 3);
        DeviceArray A = rt.array(DType.FLOAT64, 4, 3), B = rt.array(DType.FLOAT64, 3, 5),
                C = rt.array(DType.FLOAT64, 4, 5);
        put(A, a);
        put(B, b);
        put(C, c);
        la.gemm(A, B, C); // alpha 1, beta 0: C's old value ignored
        double[] want = gemmRef(4, 5, 3, false, false, 1.0, a, b, 0.0, c);
        double[] got = get(C);
        for (int i = 0; i < 20; i++)
            close(got[i], want[i], DType.FLOAT64, "C[" + i + "]");
        assertSame(la, rt.linalg());
        try (Kernel g = rt.task("gemm_f64")) {
            assertEquals("gemm_f64", g.name());
            g.launch(new Dim3(1), new Dim3(1), A, B, C, 4L, 5L, 3L, 0, 0, 2.0, 0.0);
        }
        got = get(C);
        for (int i = 0; i < 20; i++)
            close(got[i], 2 * want[i], DType.FLOAT64, "2 C[" + i + "]");
        NotFoundException e = assertThrows(NotFoundException.class, () -> rt.task("gemm_f16"));
        assertTrue(e.getMessage().contains("gemm_f32"), e.getMessage());
    }

    @Test
    void axpyThenDotReadWhatTheCallBeforeWrote() {
        for (DType dt : new DType[] {DType.FLOAT32, DType.FLOAT64})
            for (int n : new int[] {1, 1000, 4097}) {
                double[] x = values(n, 7), y = values(n, 70);
                try (DeviceArray X = rt.array(dt, n); DeviceArray Y = rt.array(dt, n);
                     DeviceArray R = rt.array(dt, 1)) {
                    put(X, x);
                    put(Y, y);
                    la.axpy(-2.5, X, Y);
                    la.dot(X, Y, R); // reads Y as axpy left it
                    double want = 0;
                    for (int i = 0; i < n; i++) {
                        y[i] = -2.5 * x[i] + y[i];
                        want += x[i] * y[i];
                    }
                    double[] got = get(Y);
                    for (int i = 0; i < n; i++)
                        close(got[i], y[i], dt, "axpy " + dt + " n=" + n + " y[" + i + "]");
                    close(get(R)[0], want, dt, "dot " + dt + " n=" + n);
                }
            }
    }

    @Test
    void tiledGemmOverDevicesMatchesTheReferenceAndReportsItsPlan() {
        try (Runtime r4 = new Runtime(new Runtime.Options().devices("host:4"))) {
            Linalg l4 = r4.linalg();
            int[][] shapes = {{24, 24, 24}, {40, 30, 4}, {6, 5, 70}};
            for (DType dt : new DType[] {DType.FLOAT32, DType.FLOAT64})
                for (int s = 0; s < shapes.length; s++) {
                    int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
                    boolean ta = s == 1, tb = s == 2;
                    double beta = s == 0 ? 0.0 : 1.25;
                    double[] a = values(m * k, 7 + s), b = values(k * n, 70 + s),
                            c = values(m * n, 700 + s);
                    try (DeviceArray A = r4.array(dt, ta ? k : m, ta ? m : k);
                         DeviceArray B = r4.array(dt, tb ? n : k, tb ? k : n);
                         DeviceArray C = r4.array(dt, m, n)) {
                        put(A, a);
                        put(B, b);
                        put(C, c);
                        B.prefetch(2);
                        GemmReport rep = l4.gemm(A, B, C, new GemmOptions().alpha(-0.5).beta(beta)
                                .transA(ta).transB(tb).devices(1, 2, 3).tile(4));
                        double[] want = gemmRef(m, n, k, ta, tb, -0.5, a, b, beta, c);
                        double[] got = get(C);
                        for (int i = 0; i < m * n; i++)
                            close(got[i], want[i], dt, "tiled gemm " + dt + " [" + i + "]");
                        assertEquals(Math.min(4, m), rep.tile());
                        assertEquals((m + rep.tile() - 1) / rep.tile(), rep.tiles());
                        long rows = 0;
                        for (int i = 0; i < rep.devices().length; i++) {
                            assertTrue(rep.devices()[i] >= 1 && rep.devices()[i] <= 3);
                            rows += rep.rows()[i];
                        }
                        assertEquals(m, rows);
                        assertTrue(rep.predictedSeconds() > 0);
                        assertFalse(rep.predictedJoules().isPresent(), "no power on CPU devices");
                    }
                }
            try (DeviceArray A = r4.array(DType.FLOAT32, 100, 3);
                 DeviceArray B = r4.array(DType.FLOAT32, 3, 2);
                 DeviceArray C = r4.array(DType.FLOAT32, 100, 2)) {
                ArgumentException e = assertThrows(ArgumentException.class,
                        () -> l4.gemm(A, B, C, new GemmOptions().devices(9)));
                assertTrue(e.getMessage().contains("does not exist"), e.getMessage());
                e = assertThrows(ArgumentException.class,
                        () -> l4.gemm(A, B, C, new GemmOptions().tile(2)));
                assertTrue(e.getMessage().contains("at least 4 rows"), e.getMessage());
                e = assertThrows(ArgumentException.class, () -> l4.gemm(A, B, C,
                        new GemmOptions().metric(GemmOptions.Metric.EDP)));
                assertTrue(e.getMessage().contains("power"), e.getMessage());
                assertEquals(25, l4.gemm(A, B, C, new GemmOptions().tile(4)).tiles());
            }
        }
    }

    @Test
    void aKernelWritesAGemmReadsItAKernelReadsC() {
        Kernel fill = rt.kernel(TestSupport.SRC, "fill");
        Kernel add1 = rt.kernel(TestSupport.SRC, "add1");
        int m = 8, n = 6, k = 5;
        DeviceArray A = rt.array(DType.FLOAT32, m, k), B = rt.array(DType.FLOAT32, k, n);
        DeviceArray C = rt.array(DType.FLOAT32, m, n), D = rt.array(DType.FLOAT32, m, n);
        rt.sync();
        int before = TestSupport.Dag.of(rt).ids("kernel").size();
        Dim3 b = new Dim3(128);
        fill.launch(new Dim3(1), b, A, 2.0f, m * k);
        fill.launch(new Dim3(1), b, B, 3.0f, k * n);
        la.gemm(A, B, C);
        add1.launch(new Dim3(1), b, D, C, m * n); // D = C + 1
        float[] d = new float[m * n], c = new float[m * n];
        D.copyTo(d);
        C.copyTo(c);
        for (int i = 0; i < m * n; i++) {
            assertEquals(2.0f * 3.0f * k + 1, d[i], "D[" + i + "]");
            assertEquals(2.0f * 3.0f * k, c[i], "C[" + i + "]");
        }
        TestSupport.Dag dag = TestSupport.Dag.of(rt);
        List<Long> ks = dag.ids("kernel");
        ks = new ArrayList<>(ks.subList(before, ks.size()));
        // gemm is one tile task (8 rows: the model's tile is C whole), after the tasks that
        // measure the device's GEMM rate when it is not cached yet (no edge from the fills)
        long g = -1;
        for (long id : ks)
            if (dag.vertex(id).name().equals("gemm_tile_out_f32") && dag.edge(ks.get(0), id))
                g = id;
        assertTrue(g >= 0, "the tile task's vertex");
        long add = ks.get(ks.size() - 1);
        assertEquals("add1", dag.vertex(add).name());
        assertTrue(dag.edge(ks.get(1), g), "fill B -> gemm");
        assertTrue(dag.edge(g, add), "gemm -> add1");
    }

    private static void throwsMentioning(Class<? extends Throwable> type, Runnable r,
            String... parts) {
        Throwable e = assertThrows(type, r::run);
        for (String p : parts)
            assertTrue(e.getMessage().contains(p),
                    "\"" + e.getMessage() + "\" does not mention \"" + p + "\"");
    }

    @Test
    void errorsNameTheProblemLaunchNothingAndLeaveTheRuntimeUsable() {
        DeviceArray A = rt.array(DType.FLOAT32, 3, 4), B = rt.array(DType.FLOAT32, 4, 5);
        DeviceArray C = rt.array(DType.FLOAT32, 3, 5), B64 = rt.array(DType.FLOAT64, 4, 5);
        DeviceArray V = rt.array(DType.FLOAT32, 12), I = rt.array(DType.INT32, 3, 4);
        DeviceArray R32 = rt.array(DType.FLOAT32, 1), R64 = rt.array(DType.FLOAT64, 1);
        float[] seven = new float[15];
        java.util.Arrays.fill(seven, 7.0f);
        C.copyFrom(seven);
        rt.sync();
        int before = TestSupport.Dag.of(rt).ids("kernel").size();
        Class<ArgumentException> arg = ArgumentException.class;
        throwsMentioning(arg, () -> la.gemm(A, B64, C, 1, 0, false, false), "gemm", "one dtype",
                "a float32", "b float64", "c float32");
        throwsMentioning(arg, () -> la.gemm(V, B, C), "gemm", "a must be a 2-D array", "[12]");
        throwsMentioning(arg, () -> la.gemm(A, A, C), "shapes do not fit",
                "op(a) is 3 x 4, op(b) 3 x 4, c 3 x 5");
        throwsMentioning(arg, () -> la.gemm(A, B, C, 1, 0, true, false), "shapes do not fit",
                "op(a) is 4 x 3");
        throwsMentioning(arg, () -> la.gemm(I, I, I), "float32 or float64", "int32");
        throwsMentioning(arg, () -> la.gemm(A, null, C), "gemm", "b must not be null");
        throwsMentioning(arg, () -> la.axpy(1.0, V, B64), "axpy", "one dtype");
        throwsMentioning(arg, () -> la.axpy(1.0, B, V), "axpy", "y has 12 elements",
                "fewer than x's 20");
        throwsMentioning(arg, () -> la.dot(V, B, R32), "dot", "x has 12 elements and y 20");
        throwsMentioning(arg, () -> la.dot(V, V, R64), "dot", "one dtype");
        DeviceArray freed = rt.array(DType.FLOAT32, 4, 5);
        freed.close();
        throwsMentioning(IllegalStateException.class, () -> la.gemm(A, freed, C), "closed");
        // Nothing was launched and C kept its value.
        assertEquals(before, TestSupport.Dag.of(rt).ids("kernel").size(), "kernel vertices");
        float[] c = new float[15];
        C.copyTo(c);
        for (int i = 0; i < 15; i++)
            assertEquals(7.0f, c[i], "C[" + i + "] untouched");
        // The runtime still works: C = I_3x4 B.
        A.copyFrom(new float[] {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0});
        float[] b = new float[20];
        for (int i = 0; i < 20; i++)
            b[i] = i + 1;
        B.copyFrom(b);
        la.gemm(A, B, C);
        C.copyTo(c);
        for (int i = 0; i < 15; i++)
            assertEquals(b[i], c[i], "C[" + i + "]");
        rt.close();
        throwsMentioning(IllegalStateException.class, () -> la.gemm(A, B, C), "closed");
    }
}
