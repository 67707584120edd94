package polygpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static polygpu.TestSupport.BLOCK;
import static polygpu.TestSupport.GRID;
import static polygpu.TestSupport.N;
import static polygpu.TestSupport.SRC;

import org.junit.jupiter.api.Test;

/**
 * The elide_copies limit study from Java: copies skipped, values wrong, and the stats say so;
 * and {@link Runtime#clock()}, virtual on simulated devices.
 */
class ElideTest {
    private static float run(Stats[] out, String elide) {
        Runtime.Options o = new Runtime.Options().devices("host:2");
        if (elide != null)
            o.set("elide_copies", elide);
        try (Runtime rt = new Runtime(o)) {
            Kernel add1 = rt.kernel(SRC, "add1");
            DeviceArray x = rt.array("float32", N), y = rt.array("float32", N);
            float[] ones = new float[N];
            java.util.Arrays.fill(ones, 1.0f);
            x.copyFrom(ones);
            add1.launch(GRID, BLOCK, y, x, N);
            float v = y.getFloat(5);
            out[0] = rt.stats();
            return v;
        }
    }

    @Test
    void elidedCopiesLeaveWrongValuesAndAreCounted() {
        Stats[] s = new Stats[1];
        assertEquals(0.0f, run(s, "1")); // x never reached the device, y never came back
        assertEquals(2, s[0].copiesElided());
        assertEquals(2L * N * 4, s[0].bytesElided());
        assertEquals(2, s[0].copies()); // counted as if made
    }

    @Test
    void clockIsVirtualOnSimulatedDevices() {
        double a = chain(), b = chain();
        assertEquals(a, b, 0.0); // the same work takes the same virtual time
        org.junit.jupiter.api.Assertions.assertTrue(a > 0 && a < 0.01, "virtual time " + a);
        try (Runtime rt = new Runtime(new Runtime.Options().devices("host:1"))) {
            double c0 = rt.clock();
            org.junit.jupiter.api.Assertions.assertTrue(rt.clock() >= c0);
        }
    }

    private static double chain() {
        try (Runtime rt = new Runtime(new Runtime.Options().devices("sim:h200x1,host_time=0"))) {
            Kernel add1 = rt.kernel(SRC, "add1");
            int n = 1 << 20;
            DeviceArray x = rt.array("float32", n), y = rt.array("float32", n);
            rt.sync();
            double t0 = rt.clock();
            for (int i = 0; i < 10; i++)
                add1.launch(new Dim3(n / 256), new Dim3(256), i % 2 == 0 ? y : x, i % 2 == 0 ? x : y, n);
            rt.sync();
            return rt.clock() - t0;
        }
    }

    @Test
    void offByDefault() {
        Stats[] s = new Stats[1];
        assertEquals(2.0f, run(s, null));
        assertEquals(0, s[0].copiesElided());
        assertEquals(0, s[0].evictions());
    }
}
