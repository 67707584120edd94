package polygpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static polygpu.TestSupport.BLOCK;
import static polygpu.TestSupport.GRID;
import static polygpu.TestSupport.N;
import static polygpu.TestSupport.SRC;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Each bad input gives its exception class with the runtime's message; nothing is launched. */
class ErrorTest {
    Runtime rt;
    Kernel fill, add1;
    DeviceArray y, x;

    @BeforeEach
    void setUp() {
        rt = TestSupport.runtime(null);
        fill = rt.kernel(SRC, "fill");
        add1 = rt.kernel(SRC, "add1");
        y = rt.array("float32", N);
        x = rt.array("float32", N);
    }

    @AfterEach
    void tearDown() {
        rt.close();
    }

    @Test
    void unknownDtype() {
        ArgumentException e = assertThrows(ArgumentException.class, () -> rt.array("float33", 4));
        assertTrue(e.getMessage().contains("float33"), e.getMessage());
        assertThrows(ArgumentException.class, () -> DType.parse("complex64"));
    }

    @Test
    void unknownPolicyAndOptions() {
        ArgumentException e = assertThrows(ArgumentException.class,
                () -> new Runtime(new Runtime.Options().policy("fastest-please")));
        assertTrue(e.getMessage().contains("fastest-please"), e.getMessage());
        assertThrows(ArgumentException.class,
                () -> new Runtime(new Runtime.Options().streamPolicy("sometimes")));
        assertThrows(ArgumentException.class,
                () -> new Runtime(new Runtime.Options().set("colour", "blue")));
        assertThrows(ArgumentException.class,
                () -> new Runtime(new Runtime.Options().explorationThreshold(2.0)));
        // NaN and negative values were read as "unset" and silently became the default.
        for (double bad : new double[] {Double.NaN, -0.5}) {
            ArgumentException t = assertThrows(ArgumentException.class,
                    () -> new Runtime(new Runtime.Options().explorationThreshold(bad)));
            assertTrue(t.getMessage().contains("[0, 1]"), t.getMessage());
        }
        assertThrows(ArgumentException.class,
                () -> new Runtime(new Runtime.Options().set("prefetch", "maybe")));
        assertThrows(ArgumentException.class,
                () -> new Runtime(new Runtime.Options().devices("abacus:3")));
    }

    @Test
    void badShape() {
        assertThrows(ArgumentException.class, () -> rt.array("float32", 0));
        assertThrows(ArgumentException.class, () -> rt.array("float32", 4, -1));
        assertThrows(ArgumentException.class, () -> rt.array("float32"));
        assertThrows(ArgumentException.class, () -> rt.array("float32", 1, 2, 3, 4, 5));
    }

    @Test
    void wrongArgumentCount() {
        ArgumentException e = assertThrows(ArgumentException.class,
                () -> fill.launch(GRID, BLOCK, y, 1.0f));
        assertTrue(e.getMessage().contains("fill"), e.getMessage());
        assertThrows(ArgumentException.class, () -> fill.launch(GRID, BLOCK, y, 1.0f, N, N));
        assertThrows(ArgumentException.class, () -> fill.configure(GRID, BLOCK).launch());
        assertEquals(0, rt.stats().kernels(), "nothing was launched");
    }

    @Test
    void wrongArgumentType() {
        assertThrows(ArgumentException.class, () -> fill.launch(GRID, BLOCK, 1.0f, y, N),
                "scalar for an array, array for a scalar");
        assertThrows(ArgumentException.class, () -> fill.launch(GRID, BLOCK, y, "1.0", N));
        assertThrows(ArgumentException.class, () -> fill.launch(GRID, BLOCK, y, null, N));
        DeviceArray ints = rt.array("int32", N);
        assertThrows(ArgumentException.class, () -> add1.launch(GRID, BLOCK, y, ints, N),
                "array of the wrong element type");
        assertThrows(ArgumentException.class, () -> fill.launch(GRID, BLOCK, y, 1.0f, 2.5),
                "a float for an int parameter");
        assertEquals(0, rt.stats().kernels());
    }

    @Test
    void scalarOutOfRange() {
        ArgumentException e = assertThrows(ArgumentException.class,
                () -> fill.launch(GRID, BLOCK, y, 1.0f, 1L << 40));
        assertTrue(e.getMessage().contains("int32"), e.getMessage());
        assertThrows(ArgumentException.class, () -> fill.launch(GRID, BLOCK, y, 1e300, N),
                "a double that does not fit float");
        fill.launch(GRID, BLOCK, y, 1.0f, (long) N); /* a Long that fits is fine */
        fill.launch(GRID, BLOCK, y, 2, (short) N); /* an int for a float parameter too */
        assertEquals(2.0f, y.getFloat(0));
    }

    @Test
    void badLaunchConfiguration() {
        assertThrows(ArgumentException.class, () -> new Dim3(0));
        assertThrows(ArgumentException.class, () -> new Dim3(4, -1, 1));
        /* Past every device's limits: CPU devices allow 8192 threads per block, GPUs 1024. */
        assertThrows(ArgumentException.class,
                () -> fill.launch(GRID, new Dim3(16384), y, 1.0f, N), "too many threads");
        assertThrows(ArgumentException.class, () -> fill.configure(GRID, BLOCK, -1));
    }

    static final String COUNT = "extern \"C\" __global__ void count(int *y) {\n"
            + "  __shared__ int n;\n"
            + "  if (threadIdx.x == 0) n = 0;\n"
            + "  __syncthreads();\n"
            + "  atomicAdd(&n, 1);\n"
            + "  __syncthreads();\n"
            + "  if (threadIdx.x == 0) y[blockIdx.x] = n;\n"
            + "}\n";

    @Test
    void cpuDeviceLimits() {
        try (Runtime r = new Runtime(new Runtime.Options().devices("host:2"))) {
            for (Device d : r.devices()) {
                assertEquals(8192, d.maxThreadsPerBlock());
                assertEquals(new Dim3(8192, 8192, 8192), d.maxBlock());
                assertEquals(new Dim3(Integer.MAX_VALUE, 65535, 65535), d.maxGrid());
                assertEquals(64L << 20, d.maxSharedMemoryPerBlock());
            }
            Kernel count = r.kernel(COUNT, "count");
            DeviceArray c = r.array("int32", 2);
            count.launch(new Dim3(2), new Dim3(8192), c); /* past a GPU's 1024 */
            assertEquals(8192, c.getInt(0));
            assertEquals(8192, c.getInt(1));
            ArgumentException e = assertThrows(ArgumentException.class,
                    () -> count.launch(new Dim3(1), new Dim3(8193), c));
            assertTrue(e.getMessage().contains(
                    "devices 0-1 (CPU devices) each allows 8192 threads per block"), e.getMessage());
            e = assertThrows(ArgumentException.class,
                    () -> count.configure(new Dim3(1), new Dim3(32), (64L << 20) + 1).launch(c));
            assertTrue(e.getMessage().contains("allows 67108864 bytes (64 MiB) of shared memory"),
                    e.getMessage());
        }
    }

    @Test
    void compileErrorCarriesTheLog() {
        String bad = "extern \"C\" __global__ void broken(float *y, int n) {\n"
                + "  y[0] = undeclared_thing + 1; }\n";
        CompileException e = assertThrows(CompileException.class, () -> rt.kernel(bad, "broken"));
        assertEquals("PG_ERROR_COMPILE", e.getStatus());
        assertFalse(e.getLog().isEmpty(), "the compiler's log");
        assertTrue(e.getLog().contains("undeclared_thing"), e.getLog());
        assertTrue(e instanceof PolygpuException);
    }

    @Test
    void unknownKernelName() {
        NotFoundException e = assertThrows(NotFoundException.class, () -> rt.kernel(SRC, "fil"));
        assertTrue(e.getMessage().contains("fil"), e.getMessage());
        assertEquals("PG_ERROR_NOT_FOUND", e.getStatus());
    }

    @Test
    void badSignature() {
        assertThrows(ArgumentException.class,
                () -> rt.kernel(SRC, "fill", "out quaternion *y, float v, int n"));
    }

    @Test
    void stringsWithNulAreRefused() {
        assertThrows(ArgumentException.class, () -> rt.kernel(SRC, "fi\0ll"));
    }

    @Test
    void unwritableExportPath() {
        PolygpuException e = assertThrows(PolygpuException.class,
                () -> rt.exportDag("/nonexistent-dir/dag.dot"));
        assertFalse(e.getMessage().isEmpty());
    }

    @Test
    void nonAsciiMessagesSurvive() {
        ArgumentException e = assertThrows(ArgumentException.class,
                () -> new Runtime(new Runtime.Options().policy("pólítica-ü")));
        assertTrue(e.getMessage().contains("pólítica-ü"), e.getMessage());
    }
}
