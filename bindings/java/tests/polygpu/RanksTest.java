package polygpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Ranks from Java in one process (the runs on several ranks are examples/java/Ranks.java under
 * mpirun): rank 0 of 1, arrays and views owned by rank 0, another rank refused naming the
 * problem with the array still usable, the counters in Stats.
 */
class RanksTest {
    @Test
    void oneProcessIsRankZeroOfOne() {
        try (Runtime rt = TestSupport.runtime(null); DeviceArray a = rt.array(DType.FLOAT32, 8)) {
            assertEquals(0, rt.rank());
            assertEquals(1, rt.nranks());
            assertEquals(0, a.owner());
            assertEquals(a, a.setOwner(0));
            ArgumentException e = assertThrows(ArgumentException.class, () -> a.setOwner(1));
            assertTrue(e.getMessage().contains("1 rank(s)"), e.getMessage());
            List<DeviceArray> vs = a.split(2);
            assertEquals(0, vs.get(1).owner());
            a.copyFrom(new float[] {1, 2, 3, 4, 5, 6, 7, 8});
            assertEquals(8.0f, a.getFloat(7));
            assertTrue(rt.dagSnapshot().vertices().stream().allMatch(v -> v.rank() == 0));
            Stats s = rt.stats();
            assertEquals(0, s.rank());
            assertEquals(1, s.nranks());
            assertEquals(0, s.rankMessagesSent());
            for (DeviceArray v : vs)
                v.close();
        }
    }
}
