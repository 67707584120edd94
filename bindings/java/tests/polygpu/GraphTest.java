package polygpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static polygpu.TestSupport.BLOCK;
import static polygpu.TestSupport.GRID;
import static polygpu.TestSupport.N;
import static polygpu.TestSupport.SRC;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Runtime.record: launches recorded once (nothing runs), replayed with Graph.launch(). */
class GraphTest {
    Runtime rt;
    Kernel add1, scale;
    DeviceArray x, y;

    @BeforeEach
    void setUp() {
        rt = TestSupport.runtime(null);
        add1 = rt.kernel(SRC, "add1");
        scale = rt.kernel(SRC, "scale");
        x = rt.array(DType.FLOAT32, N);
        y = rt.array(DType.FLOAT32, N);
    }

    @AfterEach
    void tearDown() {
        rt.close();
    }

    @Test
    void recordingRunsNothingAndEachReplayEqualsTheLaunches() {
        try (Graph g = rt.record(() -> {
            add1.launch(GRID, BLOCK, y, x, N);
            scale.launch(GRID, BLOCK, y, 2.0f, N);
        })) {
            assertEquals(2, g.calls());
            assertEquals(0.0f, y.getFloat(5)); // nothing ran
            for (int r = 0; r < 3; r++) {
                x.setFloat(5, 10.0f * r);
                g.launch();
                assertEquals((10.0f * r + 1) * 2, y.getFloat(5));
            }
            // The first replay makes the launches (and keeps them as the graph's plan); the later
            // ones, finding x where the plan reads it, issue the plan: one vertex each.
            assertEquals(4, TestSupport.Dag.of(rt).ids("kernel").size());
        }
    }

    @Test
    void hostAccessAndOtherRuntimesRefusedInside() {
        try (Runtime other = new Runtime(new Runtime.Options().devices("host:1"));
             DeviceArray o = other.array(DType.FLOAT32, 4)) {
            Graph g = rt.record(() -> {
                add1.launch(GRID, BLOCK, y, x, N);
                StateException e = assertThrows(StateException.class, () -> y.getFloat(0));
                assertTrue(e.getMessage().contains("records a graph"), e.getMessage());
                assertThrows(StateException.class, () -> rt.sync());
                e = assertThrows(StateException.class, () -> o.getFloat(0));
                assertTrue(e.getMessage().contains("another runtime"), e.getMessage());
            });
            assertEquals(0.0f, o.getFloat(0)); // the recording is over
            g.launch();
            assertEquals(1.0f, y.getFloat(0));
            g.close();
            assertThrows(IllegalStateException.class, g::launch);
        }
    }

    @Test
    void anExceptionDropsTheRecording() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> rt.record(() -> {
            add1.launch(GRID, BLOCK, y, x, N);
            throw new IllegalArgumentException("boom");
        }));
        assertEquals("boom", e.getMessage());
        add1.launch(GRID, BLOCK, y, x, N); // not recording any more: this runs
        assertEquals(1.0f, y.getFloat(0));
    }

    @Test
    void replayAfterARecordedArrayWasClosedIsRefused() {
        Graph g = rt.record(() -> add1.launch(GRID, BLOCK, y, x, N));
        y.close();
        StateException e = assertThrows(StateException.class, g::launch);
        assertTrue(e.getMessage().contains("freed after it was recorded"), e.getMessage());
    }
}
