package polygpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static polygpu.TestSupport.BLOCK;
import static polygpu.TestSupport.FILL_OUT;
import static polygpu.TestSupport.GRID;
import static polygpu.TestSupport.N;
import static polygpu.TestSupport.SRC;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The power budget's device set, its errors, and energy per device in Stats. */
class PowerTest {
    static final String WATTS = "0:120,1:80,2:100,3:40";

    static final String SPIN = """
            extern "C" __global__ void spin(float *a, long long ns) {
              struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
              long long t0 = t.tv_sec * 1000000000LL + t.tv_nsec, now;
              do { clock_gettime(CLOCK_MONOTONIC, &t); now = t.tv_sec * 1000000000LL + t.tv_nsec; }
              while (now - t0 < ns);
              if (threadIdx.x == 0 && blockIdx.x == 0) a[0] += 1.0f; }
            """;

    static Runtime runtime(String devices, String watts, double limit) {
        return new Runtime(new Runtime.Options().devices(devices).powerWatts(watts)
                .powerLimit(limit));
    }

    @Test
    void noBudgetUsesEveryDevice() {
        try (Runtime rt = runtime("host:3", "0:120,2:40", 0)) {
            PowerChoice c = rt.powerChoice();
            assertEquals(List.of(0, 1, 2), c.devices());
            assertFalse(c.limitWatts().isPresent());
            assertEquals(120.0, c.watts(0).getAsDouble());
            assertFalse(c.watts(1).isPresent());
            assertFalse(c.fromModels());
            Stats s = rt.stats();
            assertEquals(0.0, s.energyJoules(0).getAsDouble());
            assertFalse(s.energyJoules(1).isPresent(), "no figure: unknown");
            assertEquals(40.0, s.powerWatts(2).getAsDouble());
        }
    }

    @Test
    void budgetsChooseGreedilyAndKernelsStayThere() {
        double[][] cases = {{200, 120}, {220, 220}, {40, 40}};
        List<List<Integer>> want = List.of(List.of(3, 1), List.of(3, 1, 2), List.of(3));
        for (int i = 0; i < cases.length; i++)
            try (Runtime rt = runtime("host:4", WATTS, cases[i][0])) {
                PowerChoice c = rt.powerChoice();
                assertEquals(want.get(i), c.devices());
                assertEquals(cases[i][1], c.usedWatts());
                assertEquals(cases[i][0], c.limitWatts().getAsDouble());
            }
        try (Runtime rt = new Runtime(new Runtime.Options().devices("host:4").policy("round-robin")
                .powerWatts(WATTS).powerLimit(200))) {
            Kernel fill = rt.kernel(SRC, "fill", FILL_OUT);
            DeviceArray y = null;
            for (int i = 0; i < 8; i++) {
                y = rt.array(DType.FLOAT32, N);
                fill.launch(GRID, BLOCK, y, 1.5f, N);
            }
            assertEquals(1.5f, y.getFloat(N - 1));
            Set<Integer> used = rt.dagSnapshot().vertices().stream()
                    .filter(v -> v.kind() == Dag.Kind.KERNEL).map(Dag.Vertex::device)
                    .collect(Collectors.toSet());
            assertEquals(Set.of(1, 3), used);
        }
    }

    @Test
    void errorsNameTheProblem() {
        ArgumentException e = assertThrows(ArgumentException.class,
                () -> runtime("host:4", WATTS, 39).close());
        assertTrue(e.getMessage().contains("smallest draws 40 W (device 3"), e::getMessage);
        e = assertThrows(ArgumentException.class, () -> runtime("host:2", "0:50", 100).close());
        assertTrue(e.getMessage().contains("device 1 is unknown"), e::getMessage);
        e = assertThrows(ArgumentException.class, () -> runtime("host:2", "0:fifty", 0).close());
        assertTrue(e.getMessage().contains("power_watts"), e::getMessage);
        assertThrows(ArgumentException.class, () -> new Runtime.Options().powerLimit(-1));
        assertThrows(ArgumentException.class, () -> new Runtime.Options().powerLimit(Double.NaN));
        try (Runtime rt = runtime("host:2", "75", 80)) {
            assertEquals(List.of(0), rt.powerChoice().devices());
        }
    }

    @Test
    void cpuEnergyIsWattsTimesBusyTime() {
        try (Runtime rt = runtime("host:2", "0:100,1:50", 120)) {
            Kernel spin = rt.kernel(SPIN, "spin");
            DeviceArray a = rt.array(DType.FLOAT32, 4);
            long t0 = System.nanoTime();
            spin.launch(new Dim3(1), new Dim3(1), a, 30_000_000L); /* 30 ms on device 1 */
            rt.sync();
            double wall = (System.nanoTime() - t0) / 1e9;
            Stats s = rt.stats();
            assertEquals(0.0, s.energyJoules(0).getAsDouble(), "device 0 never busy");
            double j = s.energyJoules(1).getAsDouble();
            assertTrue(j >= 50 * 0.030 && j <= 50 * wall, () -> "energy " + j);
            spin.launch(new Dim3(1), new Dim3(1), a, 30_000_000L);
            rt.sync();
            assertTrue(rt.stats().energyJoules(1).getAsDouble() >= j + 50 * 0.030);
        }
    }
}
