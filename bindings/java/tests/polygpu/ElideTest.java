package polygpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static polygpu.TestSupport.BLOCK;
import static polygpu.TestSupport.GRID;
import static polygpu.TestSupport.N;
import static polygpu.TestSupport.SRC;

import org.junit.jupiter.api.Test;

/** The elide_copies limit study from Java: copies skipped, values wrong, and the stats say so. */
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
    void offByDefault() {
        Stats[] s = new Stats[1];
        assertEquals(2.0f, run(s, null));
        assertEquals(0, s[0].copiesElided());
        assertEquals(0, s[0].evictions());
    }
}
