package polygpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static polygpu.TestSupport.BLOCK;
import static polygpu.TestSupport.GRID;
import static polygpu.TestSupport.N;
import static polygpu.TestSupport.SRC;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Options reach the runtime under their C names and take effect. */
class OptionsTest {

    @Test
    void settersUseTheCNames() {
        Runtime.Options o = new Runtime.Options().devices("host:2").policy("round-robin")
                .streamPolicy("fifo").parentStreamPolicy("disjoint").execution("async")
                .prefetch(true).interconnect("m.csv").explorationThreshold(0.25).log("info")
                .trace("t.json").cacheDir("/tmp/c").check("bounds")
                .deviceMemoryLimit(4L << 20);
        assertEquals("host:2", o.values().get("devices"));
        assertEquals("fifo", o.values().get("stream_policy"));
        assertEquals("disjoint", o.values().get("parent_stream_policy"));
        assertEquals("1", o.values().get("prefetch"));
        assertEquals("m.csv", o.values().get("interconnect"));
        assertEquals("0.25", o.values().get("exploration_threshold"));
        assertEquals("t.json", o.values().get("trace"));
        assertEquals("/tmp/c", o.values().get("cache_dir"));
        assertEquals("bounds", o.values().get("check"));
        assertEquals("4194304", o.values().get("device_memory_limit"));
        assertEquals("64M", o.deviceMemoryLimit("64M").values().get("device_memory_limit"));
        o.devices(null);
        assertFalse(o.values().containsKey("devices"));
    }

    @Test
    void devicesTraceAndCacheTakeEffect(@TempDir Path dir) throws Exception {
        Path trace = dir.resolve("trace.json"), cache = dir.resolve("cache");
        try (Runtime rt = new Runtime(new Runtime.Options().devices("host:2")
                .trace(trace.toString()).cacheDir(cache.toString()))) {
            assertEquals(2, rt.devices().size());
            Device d = rt.devices().get(1);
            assertEquals(1, d.id());
            assertEquals(Device.Kind.CPU, d.kind());
            assertTrue(d.memoryBytes() > 0 && d.multiprocessors() > 0);
            assertFalse(d.name().isEmpty());
            DeviceArray y = rt.array("float32", N);
            rt.kernel(SRC, "fill").launch(GRID, BLOCK, y, 1.0f, N);
            assertEquals(1.0f, y.getFloat(0));
            assertFalse(Files.exists(trace), "the trace is written at close");
        }
        assertTrue(Files.readString(trace).contains("traceEvents"));
        try (Stream<Path> files = Files.walk(cache)) {
            assertTrue(files.anyMatch(Files::isRegularFile), "a compiled kernel was cached");
        }
    }

    @Test
    void explorationThresholdOutsideZeroToOneIsRejected() {
        for (double v : new double[] {Double.NaN, -0.5, 1.5, Double.POSITIVE_INFINITY,
                Double.NEGATIVE_INFINITY}) {
            ArgumentException e = assertThrows(ArgumentException.class,
                    () -> new Runtime.Options().explorationThreshold(v), "threshold " + v);
            assertTrue(e.getMessage().contains("explorationThreshold " + v)
                    && e.getMessage().contains("[0, 1]"), e.getMessage());
        }
        Runtime.Options ok = new Runtime.Options().explorationThreshold(0).explorationThreshold(1);
        assertEquals("1.0", ok.values().get("exploration_threshold"));
        /* By name the text reaches the runtime, which checks it the same way: a negative or
         * NaN threshold is an error there, not "unset". */
        for (String v : new String[] {"NaN", "nan", "-0.5", "-1", "1.01", "inf"}) {
            ArgumentException e = assertThrows(ArgumentException.class,
                    () -> new Runtime(new Runtime.Options().set("exploration_threshold", v)),
                    "threshold '" + v + "'");
            assertTrue(e.getMessage().contains("exploration_threshold"), e.getMessage());
        }
    }

    @Test
    void deviceMemoryLimitTakesEffect() {
        try (Runtime rt = new Runtime(new Runtime.Options().devices("host:1")
                .deviceMemoryLimit(2 * 4 * N))) {
            DeviceArray y = rt.array("float32", N), a = rt.array("float32", N),
                    b = rt.array("float32", N);
            OutOfMemoryException e = assertThrows(OutOfMemoryException.class,
                    () -> rt.kernel(SRC, "sum2").launch(GRID, BLOCK, y, a, b, N));
            assertTrue(e.getMessage().contains("device_memory_limit 8000"), e.getMessage());
            rt.kernel(SRC, "add1").launch(GRID, BLOCK, y, a, N); /* 8000 bytes: fits */
            assertEquals(1.0f, y.getFloat(0));
        }
    }

    @Test
    void booleanScalars() {
        String src = "extern \"C\" __global__ void pick(float *y, bool b, int n) {\n"
                + "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = b ? 1 : 2; }";
        try (Runtime rt = TestSupport.runtime(null)) {
            DeviceArray y = rt.array("float32", N);
            Kernel pick = rt.kernel(src, "pick");
            pick.launch(GRID, BLOCK, y, true, N);
            assertEquals(1.0f, y.getFloat(5));
            pick.launch(GRID, BLOCK, y, false, N);
            assertEquals(2.0f, y.getFloat(5));
        }
    }
}
