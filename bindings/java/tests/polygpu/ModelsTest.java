package polygpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static polygpu.TestSupport.BLOCK;
import static polygpu.TestSupport.FILL_OUT;
import static polygpu.TestSupport.GRID;
import static polygpu.TestSupport.N;
import static polygpu.TestSupport.SRC;

import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Runtime.models(): what measured kernels taught, on with min-finish-time, kept in cache_dir. */
class ModelsTest {

    static Runtime runtime(Path dir, String models) {
        Runtime.Options o = new Runtime.Options().devices("host:2").policy("min-finish-time")
                .cacheDir(dir.toString());
        if (models != null)
            o.models(models);
        return new Runtime(o);
    }

    /** add1 over the same two arrays `times` times, checked. */
    static void runAdd1(Runtime rt, int times) {
        Kernel fill = rt.kernel(SRC, "fill", FILL_OUT);
        Kernel add1 = rt.kernel(SRC, "add1");
        DeviceArray x = rt.array(DType.FLOAT32, N), y = rt.array(DType.FLOAT32, N);
        fill.launch(GRID, BLOCK, x, 1.0f, N);
        for (int i = 0; i < times; i++)
            add1.launch(GRID, BLOCK, y, x, N);
        rt.sync();
        assertEquals(2.0f, y.getFloat(N - 1));
    }

    static List<Model> modelsOf(Runtime rt, String kernel) {
        return rt.models().stream().filter(m -> m.kernel().equals(kernel))
                .collect(Collectors.toList());
    }

    @Test
    void learnsWithMinFinishTime(@TempDir Path dir) {
        try (Runtime rt = runtime(dir, null)) {
            assertEquals(0, modelsOf(rt, "add1").size(), "before any run");
            runAdd1(rt, 6);
            List<Model> found = modelsOf(rt, "add1");
            assertEquals(1, found.size(), () -> "add1 models: " + rt.models());
            Model m = found.get(0);
            assertTrue(m.samples() >= 3, () -> "samples >= 3: " + m);
            assertTrue(m.medianNs() > 0, () -> "median_ns > 0: " + m);
            assertTrue(m.deviceClass().startsWith("CPU device ("), m::deviceClass);
            long bytes = 2L * N * 4; /* both arrays, rounded down to a power of two */
            assertTrue(m.bytes() <= bytes && bytes < 2 * m.bytes(), () -> "bytes: " + m);
            assertEquals(0, m.bytes() & (m.bytes() - 1), "bytes is a power of two");
            List<Model> all = rt.models();
            assertThrows(UnsupportedOperationException.class, () -> all.add(m));
        }
    }

    @Test
    void offListsNone(@TempDir Path dir) {
        try (Runtime rt = runtime(dir, "off")) {
            runAdd1(rt, 6);
            assertEquals(List.of(), rt.models());
        }
    }

    @Test
    void persistInCacheDir(@TempDir Path dir) {
        Model kept;
        try (Runtime rt = runtime(dir, null)) {
            runAdd1(rt, 6);
            List<Model> found = modelsOf(rt, "add1");
            assertEquals(1, found.size(), () -> "add1 models: " + rt.models());
            kept = found.get(0);
        }
        try (Runtime rt = runtime(dir, null)) {
            List<Model> found = modelsOf(rt, "add1");
            assertEquals(List.of(kept), found, "the first runtime's model, loaded");
        }
    }
}
