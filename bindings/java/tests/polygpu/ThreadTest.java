package polygpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static polygpu.TestSupport.BLOCK;
import static polygpu.TestSupport.FILL_OUT;
import static polygpu.TestSupport.GRID;
import static polygpu.TestSupport.N;
import static polygpu.TestSupport.SRC;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** Several Java threads launching on one runtime, with shared kernels and a shared input. */
class ThreadTest {

    @Test
    void threadsLaunchOnOneRuntime() throws Exception {
        int threads = 8, iterations = 25;
        try (Runtime rt = TestSupport.runtime(null)) {
            Kernel fillOut = rt.kernel(SRC, "fill", FILL_OUT);
            Kernel add1 = rt.kernel(SRC, "add1");
            Kernel sum2 = rt.kernel(SRC, "sum2");
            Kernel scale = rt.kernel(SRC, "scale");
            DeviceArray shared = rt.array("float32", N);
            fillOut.launch(GRID, BLOCK, shared, 100.0f, N);
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                final int id = t;
                done.add(pool.submit(() -> {
                    try (DeviceArray x = rt.array("float32", N);
                            DeviceArray y = rt.array("float32", N);
                            DeviceArray z = rt.array("float32", N)) {
                        float[] out = new float[N];
                        for (int it = 0; it < iterations; it++) {
                            float v = id * 1000 + it;
                            fillOut.launch(GRID, BLOCK, x, v, N);
                            add1.configure(GRID, BLOCK).launch(y, x, N); /* v + 1 */
                            scale.launch(GRID, BLOCK, y, 2.0f, N); /* 2v + 2 */
                            sum2.launch(GRID, BLOCK, z, y, shared, N); /* 2v + 102 */
                            assertEquals(2 * v + 2, y.getFloat(it % N));
                            z.copyTo(out);
                            for (int i = 0; i < N; i++)
                                assertEquals(2 * v + 102, out[i], "thread " + id + " it " + it);
                        }
                    }
                    return null;
                }));
            }
            pool.shutdown();
            for (Future<?> f : done)
                f.get(); /* rethrows a failed assertion */
            Stats st = rt.stats();
            assertEquals(1 + (long) threads * iterations * 4, st.kernels());
            assertEquals(100.0f, shared.getFloat(N - 1));
        }
    }
}
