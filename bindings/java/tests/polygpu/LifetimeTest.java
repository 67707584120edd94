package polygpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static polygpu.TestSupport.BLOCK;
import static polygpu.TestSupport.GRID;
import static polygpu.TestSupport.N;
import static polygpu.TestSupport.SRC;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** close(), the Cleaner safety net, and IllegalStateException on every closed handle. */
class LifetimeTest {

    @Test
    void closedRuntime() {
        Runtime rt = TestSupport.runtime(null);
        Kernel k = rt.kernel(SRC, "fill");
        DeviceArray a = rt.array("float32", N);
        k.launch(GRID, BLOCK, a, 1.0f, N);
        rt.close();
        assertTrue(rt.isClosed());
        rt.close(); /* again: nothing */
        assertThrows(IllegalStateException.class, rt::sync);
        assertThrows(IllegalStateException.class, rt::stats);
        assertThrows(IllegalStateException.class, rt::dag);
        assertThrows(IllegalStateException.class, rt::devices);
        assertThrows(IllegalStateException.class, () -> rt.array("float32", 4));
        assertThrows(IllegalStateException.class, () -> rt.kernel(SRC, "fill"));
        assertThrows(IllegalStateException.class, () -> rt.writeTrace("/tmp/never.json"));
        /* Its arrays and kernels were freed with it. */
        assertTrue(a.isClosed() && k.isClosed());
        assertThrows(IllegalStateException.class, () -> a.getFloat(0));
        assertThrows(IllegalStateException.class, () -> k.launch(GRID, BLOCK, a, 1.0f, N));
        a.close(); /* harmless after the runtime freed it */
        k.close();
    }

    @Test
    void closedArray() {
        try (Runtime rt = TestSupport.runtime(null)) {
            Kernel k = rt.kernel(SRC, "fill");
            DeviceArray a = rt.array("float32", N);
            k.launch(GRID, BLOCK, a, 2.0f, N);
            a.close(); /* the launch still owns its memory */
            assertTrue(a.isClosed());
            a.close();
            assertThrows(IllegalStateException.class, () -> a.getFloat(0));
            assertThrows(IllegalStateException.class, () -> a.setFloat(0, 1.0f));
            assertThrows(IllegalStateException.class, () -> a.copyTo(new float[4]));
            assertThrows(IllegalStateException.class, () -> a.copyFrom(new float[4]));
            assertThrows(IllegalStateException.class,
                    () -> a.copyTo(ByteBuffer.allocateDirect(16)));
            assertThrows(IllegalStateException.class, a::asByteBuffer);
            assertThrows(IllegalStateException.class, a::release);
            assertThrows(IllegalStateException.class, a::validLocations);
            assertThrows(IllegalStateException.class, () -> k.launch(GRID, BLOCK, a, 1.0f, N),
                    "a closed array as a kernel argument");
            assertEquals(N, a.length(), "plain Java facts stay readable");
            rt.sync();
        }
    }

    @Test
    void closedKernel() {
        try (Runtime rt = TestSupport.runtime(null)) {
            Kernel k = rt.kernel(SRC, "fill");
            DeviceArray a = rt.array("float32", N);
            k.launch(GRID, BLOCK, a, 2.0f, N);
            Kernel.Launcher l = k.configure(GRID, BLOCK);
            k.close();
            assertTrue(k.isClosed());
            k.close();
            assertThrows(IllegalStateException.class, () -> k.launch(GRID, BLOCK, a, 1.0f, N));
            assertThrows(IllegalStateException.class, () -> l.launch(a, 1.0f, N));
            assertEquals(2.0f, a.getFloat(N - 1), "the launch before close ran");
            assertFalse(a.isClosed());
        }
    }

    @Test
    void droppedHandlesAreFreedByTheCleaner() throws InterruptedException {
        try (Runtime rt = TestSupport.runtime(null)) {
            Kernel k = rt.kernel(SRC, "fill");
            for (int round = 0; round < 5; round++) {
                for (int i = 0; i < 100; i++) {
                    DeviceArray tmp = rt.array("float32", 1 << 16);
                    k.launch(new Dim3(256), BLOCK, tmp, (float) i, 1 << 16);
                    rt.kernel(SRC, "scale"); /* dropped at once */
                }
                System.gc();
                Thread.sleep(20);
            }
            DeviceArray kept = rt.array("float32", N);
            k.launch(GRID, BLOCK, kept, 5.0f, N);
            assertEquals(5.0f, kept.getFloat(3));
        }
        /* A dropped runtime with live arrays: the Cleaner frees it once all are unreachable. */
        for (int i = 0; i < 3; i++) {
            Runtime r = TestSupport.runtime(null);
            r.array("float32", 64).setFloat(0, 1.0f);
        }
        System.gc();
        Thread.sleep(50);
    }
}
