package polygpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A kernel that faults on a CPU device throws DeviceException where its result is used, and the
 * JVM goes on: the JVM takes SIGSEGV itself (null checks, safepoint polls), and those still reach
 * its handler while polygpu's is installed.
 */
class FaultTest {
    static final int N = 4096;
    static final String SRC = """
            extern "C" __global__ void fill(float *y, float v, int n) {
              int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = v; }
            extern "C" __global__ void wild(float *y, long addr, int n) {
              int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;
              y[i] = 1.0f; if (i == n / 2) *(volatile float *)addr = 1.0f; }
            """;

    @Test
    void faultingKernelThrowsAndTheJvmGoesOn() {
        try (Runtime rt = new Runtime(new Runtime.Options().devices("host:2"))) {
            Kernel fill = rt.kernel(SRC, "fill", "out float *y, float v, int n");
            DeviceArray y = rt.array("float32", N);
            rt.kernel(SRC, "wild").launch(new Dim3(N / 256), new Dim3(256), y, 16L, N);
            DeviceException e = assertThrows(DeviceException.class, () -> y.getFloat(0));
            assertTrue(e.getMessage().contains("kernel 'wild'") && e.getMessage().contains("SIGSEGV"),
                    e.getMessage());
            // The JVM's own SIGSEGVs: null checks in compiled code, garbage collection.
            int npes = 0;
            for (int i = 0; i < 200_000; i++) {
                try {
                    Object o = i % 1000 == 0 ? null : new Object();
                    npes += o.hashCode() == 0 ? 0 : 0;
                } catch (NullPointerException x) {
                    npes++;
                }
            }
            assertEquals(200, npes);
            List<byte[]> garbage = new ArrayList<>();
            for (int i = 0; i < 2000; i++)
                garbage.add(new byte[64 * 1024]);
            System.gc();
            assertEquals(2000, garbage.size());
            DeviceArray v = rt.array("float32", N);
            fill.launch(new Dim3(N / 256), new Dim3(256), v, 5.0f, N);
            assertEquals(5.0f, v.getFloat(N - 1));
        }
    }
}
