package polygpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Every wait can end: a sync with a time limit, and Thread.interrupt() during a host read. */
class WaitTest {
    /** Long enough (a few seconds on one CPU core) that the waits below end first. */
    static final String BUSY = """
            extern "C" __global__ void busy(float *y, long long n) {
              float acc = 0.0f;
              for (long long i = 0; i < n; i++) acc = acc * 0.999999f + 1.0f;
              y[threadIdx.x] = acc; }
            """;
    static final long STEPS = 1_500_000_000L;

    @Test
    void syncWithATimeLimit() {
        try (Runtime rt = new Runtime(new Runtime.Options().devices("host:1"))) {
            Kernel busy = rt.kernel(BUSY, "busy");
            DeviceArray y = rt.array("float32", 1);
            busy.launch(new Dim3(1), new Dim3(1), y, STEPS);
            long t0 = System.nanoTime();
            WaitTimeoutException e = assertThrows(WaitTimeoutException.class,
                    () -> rt.sync(50, TimeUnit.MILLISECONDS));
            assertTrue(System.nanoTime() - t0 < 20_000_000_000L);
            assertEquals("PG_ERROR_TIMEOUT", e.getStatus());
            assertThrows(ArgumentException.class, () -> rt.sync(-1, TimeUnit.SECONDS));
            rt.sync(); // the work went on and ends
            assertTrue(y.getFloat(0) > 0);
        }
    }

    @Test
    void interruptEndsARead() throws Exception {
        try (Runtime rt = new Runtime(new Runtime.Options().devices("host:1"))) {
            Kernel busy = rt.kernel(BUSY, "busy");
            DeviceArray y = rt.array("float32", 1);
            busy.launch(new Dim3(1), new Dim3(1), y, STEPS);
            Thread self = Thread.currentThread();
            Thread interrupter = new Thread(() -> {
                try {
                    Thread.sleep(100);
                } catch (InterruptedException ignored) {
                    return;
                }
                self.interrupt();
            });
            interrupter.start();
            assertThrows(WaitInterruptedException.class, () -> y.getFloat(0));
            interrupter.join();
            assertTrue(Thread.interrupted(), "the interrupt status stays set"); // and clears it
            rt.sync(); // the runtime is still usable
            assertTrue(y.getFloat(0) > 0);
        }
    }
}
