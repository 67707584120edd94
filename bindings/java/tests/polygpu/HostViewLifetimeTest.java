package polygpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * A ByteBuffer from asByteBuffer never points at freed memory, whatever is closed or dropped
 * before it is used: the misuse scenarios of {@link ViewMisuse} run in a child JVM, so that a
 * regression fails this test instead of killing the test JVM.
 */
class HostViewLifetimeTest {

    static String location(Class<?> c) throws Exception {
        return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    }

    @Test
    void viewsOutliveEveryCloseInAChildJvm(@TempDir Path dir) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cp = location(DeviceArray.class) + File.pathSeparator + location(ViewMisuse.class);
        Path log = dir.resolve("child.log");
        Process p = new ProcessBuilder(java, "-Xmx256m",
                "-XX:ErrorFile=" + dir.resolve("hs_err_%p.log"),
                "-Djava.library.path=" + System.getProperty("java.library.path"), "-cp", cp,
                "polygpu.ViewMisuse").redirectErrorStream(true).redirectOutput(log.toFile())
                .start();
        boolean ended = p.waitFor(240, TimeUnit.SECONDS);
        if (!ended)
            p.destroyForcibly().waitFor();
        String out = Files.readString(log, StandardCharsets.UTF_8);
        assertTrue(ended, "the child JVM hung:\n" + out);
        List<String> lines = out.lines().toList();
        for (ViewMisuse.Scenario s : ViewMisuse.ALL)
            assertTrue(lines.contains("ok " + s.name()),
                    "scenario '" + s.name() + "' did not pass (exit " + p.exitValue() + "):\n"
                            + out);
        assertTrue(lines.contains("done"), out);
        assertEquals(0, p.exitValue(), out);
    }

    @Test
    void aCloseThatKeepsViewsStillClosesEverythingAndWritesTheTrace(@TempDir Path dir) {
        Path trace = dir.resolve("trace.json");
        Runtime rt = new Runtime(new Runtime.Options().trace(trace.toString()));
        DeviceArray a = rt.array("float32", TestSupport.N);
        Kernel fill = rt.kernel(TestSupport.SRC, "fill");
        fill.launch(TestSupport.GRID, TestSupport.BLOCK, a, 2.0f, TestSupport.N);
        ByteBuffer view = a.asByteBuffer(Access.IN);
        assertEquals(2.0f, view.getFloat(0));
        rt.close();
        assertTrue(Files.exists(trace), "the trace is written at close, not when the view goes");
        assertTrue(rt.isClosed() && a.isClosed() && fill.isClosed());
        for (Executable use : new Executable[] {a::release, a::asByteBuffer, () -> a.getFloat(0),
                a::prefetch, rt::sync, () -> rt.array("float32", 4),
                () -> fill.launch(TestSupport.GRID, TestSupport.BLOCK, a, 1.0f, 4)})
            assertThrows(IllegalStateException.class, use);
        assertEquals(2.0f, view.getFloat(0), "the view's memory is still there");
        a.close();
        rt.close();
        try (Runtime other = TestSupport.runtime(null)) {
            DeviceArray b = other.array("float32", 4);
            b.setFloat(3, 1.0f);
            assertEquals(1.0f, b.getFloat(3));
        }
    }

    /** Runs for about reps * n * 2 flops: long enough that a host read can wait for it. */
    static final String SPIN = """
            extern "C" __global__ void spin(float *y, int reps, int n) {
              int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;
              float acc = 0.0f; for (int r = 0; r < reps; r++) acc = acc * 0.999f + 1.0f;
              y[i] = acc; }
            """;

    @Test
    void closingAnArrayWhileAnotherThreadWaitsForAViewEndsThatWait() throws Exception {
        /* On a CPU device: the kernel must outlast the 200 ms below, which a GPU does not. */
        try (Runtime rt = new Runtime(new Runtime.Options().devices("host:1"))) {
            DeviceArray a = rt.array("float32", 32);
            Kernel spin = rt.kernel(SPIN, "spin");
            spin.launch(new Dim3(1), new Dim3(32), a, 6_000_000, 32); /* a second or two */
            /* Its map waits for spin, the array's last writer, with no lock of the binding. */
            CompletableFuture<ByteBuffer> waiter =
                    CompletableFuture.supplyAsync(() -> a.asByteBuffer(Access.IN));
            Thread.sleep(200);
            assertFalse(waiter.isDone(), "the view waits for the kernel that writes the array");
            a.close();
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> waiter.get(120, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof IllegalStateException, e.toString());
            assertTrue(e.getCause().getMessage().contains("closed while asByteBuffer waited"),
                    e.getCause().getMessage());
            assertTrue(a.state.freed(), "no buffer escaped, so nothing pins the array");
            rt.sync();
        }
    }
}
