package polygpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static polygpu.TestSupport.BLOCK;
import static polygpu.TestSupport.FILL_OUT;
import static polygpu.TestSupport.GRID;
import static polygpu.TestSupport.N;
import static polygpu.TestSupport.SRC;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Every device policy and stream policy computes the same, right results. */
class PolicyTest {

    /** Independent chains, a diamond across them, in-place updates: checked element by element. */
    static void program(Runtime rt) {
        Kernel fillOut = rt.kernel(SRC, "fill", FILL_OUT);
        Kernel add1 = rt.kernel(SRC, "add1");
        Kernel sum2 = rt.kernel(SRC, "sum2");
        Kernel scale = rt.kernel(SRC, "scale");
        int chains = 6;
        DeviceArray[] x = new DeviceArray[chains], y = new DeviceArray[chains];
        for (int c = 0; c < chains; c++) {
            x[c] = rt.array(DType.FLOAT32, N);
            y[c] = rt.array(DType.FLOAT32, N);
        }
        for (int round = 0; round < 3; round++) {
            for (int c = 0; c < chains; c++) {
                fillOut.launch(GRID, BLOCK, x[c], (float) c, N);
                add1.launch(GRID, BLOCK, y[c], x[c], N); /* y = c + 1 */
                scale.launch(GRID, BLOCK, y[c], 2.0f, N); /* y = 2c + 2 */
            }
            for (int c = 1; c < chains; c++)
                sum2.launch(GRID, BLOCK, x[c], y[c - 1], y[c], N); /* x = 4c + 2 */
            float[] out = new float[N];
            for (int c = 1; c < chains; c++) {
                x[c].copyTo(out);
                for (int i = 0; i < N; i++)
                    assertEquals(4.0f * c + 2, out[i], "x[" + c + "][" + i + "]");
            }
            assertEquals(2.0f, y[0].getFloat(N - 1));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"round-robin", "stream-aware", "min-transfer-size",
            "minmax-transfer-time"})
    void devicePolicy(String policy) {
        try (Runtime rt = TestSupport.runtime(policy)) {
            program(rt);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"same-as-parent", "disjoint", "multigpu-disjoint",
            "multigpu-early-disjoint"})
    void parentStreamPolicy(String policy) {
        try (Runtime rt = new Runtime(new Runtime.Options().parentStreamPolicy(policy)
                .streamPolicy("always-new"))) {
            program(rt);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"sync", "async"})
    void execution(String mode) {
        try (Runtime rt = new Runtime(new Runtime.Options().execution(mode).prefetch(true)
                .explorationThreshold(0.5).streamPolicy("fifo").log("off"))) {
            program(rt);
        }
    }
}
