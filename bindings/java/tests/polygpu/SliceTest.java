package polygpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static polygpu.TestSupport.BLOCK;
import static polygpu.TestSupport.FILL_OUT;
import static polygpu.TestSupport.GRID;
import static polygpu.TestSupport.N;
import static polygpu.TestSupport.SRC;

import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Views of rows: slice(lo, hi) and split() give DeviceArrays sharing the array's elements.
 * Values and writes both ways, split sizes, misuse (each refused, naming the problem, the array
 * usable after), disjoint views on two devices with no DAG edge, an overlapping view ordered
 * after both, rows of a 2-D array, the array closed before its views, try-with-resources.
 */
class SliceTest {
    static final int H = N / 2;
    static final Dim3 HALF = new Dim3((H + 255) / 256);

    Runtime rt;
    DeviceArray a; /* int32, 0..9 */

    @BeforeEach
    void setUp() {
        rt = TestSupport.runtime(null);
        a = rt.array(DType.INT32, 10);
        a.copyFrom(new int[] {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
    }

    @AfterEach
    void tearDown() {
        rt.close();
    }

    static int[] values(DeviceArray v) {
        int[] out = new int[(int) v.length()];
        v.copyTo(out);
        return out;
    }

    static long[] sizes(List<DeviceArray> views) {
        return views.stream().mapToLong(v -> v.shape()[0]).toArray();
    }

    @Test
    void sliceViewsTheRowsAndWritesGoThroughBothWays() {
        Kernel iadd = rt.kernel(SRC, "iadd");
        DeviceArray v = a.slice(2, 6);
        assertArrayEquals(new long[] {4}, v.shape());
        assertEquals(4, v.length());
        assertEquals(DType.INT32, v.dtype());
        assertEquals(a.id(), v.id()); /* a view has its array's id */
        assertArrayEquals(new int[] {2, 3, 4, 5}, values(v));
        assertEquals("DeviceArray(int32, [4], rows [2, 6) of array " + a.id() + ")", v.toString());
        assertEquals("DeviceArray(int32, [10])", a.toString());
        v.setInt(0, -1); /* through the view to the array */
        assertEquals(-1, a.getInt(2));
        a.setInt(3, -2); /* and the other way round */
        assertEquals(-2, v.getInt(1));
        iadd.launch(new Dim3(1), BLOCK, v, 100, 4); /* a kernel sees the view's rows only */
        assertArrayEquals(new int[] {0, 1, 99, 98, 104, 105, 6, 7, 8, 9}, values(a));
        v.copyFrom(new int[] {20, 30}); /* bulk access starts at the view's first row */
        assertArrayEquals(new int[] {0, 1, 20, 30, 104, 105, 6, 7, 8, 9}, values(a));
        DeviceArray all = a.slice(0, 10), last = a.slice(9, 10);
        assertArrayEquals(values(a), values(all));
        assertArrayEquals(new int[] {9}, values(last));
        DeviceArray w = v.slice(1, 3); /* a view of a view: rows 3 and 4 of a */
        assertEquals("DeviceArray(int32, [2], rows [3, 5) of array " + a.id() + ")", w.toString());
        assertArrayEquals(new int[] {30, 104}, values(w));
        w.setInt(1, 7);
        assertEquals(7, a.getInt(4));
        assertEquals(7, v.getInt(2));
    }

    @Test
    void hostViewOfAViewIsItsRows() {
        DeviceArray x = rt.array(DType.FLOAT32, 8);
        x.copyFrom(new float[] {0, 1, 2, 3, 4, 5, 6, 7});
        DeviceArray v = x.slice(4, 8);
        FloatBuffer b = v.asByteBuffer().asFloatBuffer();
        assertEquals(4, b.capacity());
        assertEquals(4.0f, b.get(0));
        b.put(1, -5.0f);
        v.release();
        assertEquals(-5.0f, x.getFloat(5));
        assertEquals(4.0f, x.getFloat(4));
    }

    @Test
    void splitIntoNearlyEqualViews() {
        List<DeviceArray> parts = a.split(3); /* as numpy.array_split: the first one longer */
        assertArrayEquals(new long[] {4, 3, 3}, sizes(parts));
        assertArrayEquals(new int[] {0, 1, 2, 3}, values(parts.get(0)));
        assertArrayEquals(new int[] {4, 5, 6}, values(parts.get(1)));
        assertArrayEquals(new int[] {7, 8, 9}, values(parts.get(2)));
        assertArrayEquals(new long[] {1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, sizes(a.split(10)));
        assertArrayEquals(new long[] {10}, sizes(a.split(1)));
        assertArrayEquals(new long[] {2, 2, 2, 2, 2}, sizes(a.split(5)));
        assertArrayEquals(new long[] {3, 3, 2, 2}, sizes(a.split(4)));
        assertThrows(UnsupportedOperationException.class, () -> parts.remove(0));
        parts.get(1).setInt(0, 40);
        assertEquals(40, a.getInt(4));
    }

    @Test
    void splitIntoGivenRows() {
        List<DeviceArray> parts = a.split(2, 5, 3);
        assertArrayEquals(new long[] {2, 5, 3}, sizes(parts));
        assertArrayEquals(new int[] {0, 1}, values(parts.get(0)));
        assertArrayEquals(new int[] {2, 3, 4, 5, 6}, values(parts.get(1)));
        assertArrayEquals(new int[] {7, 8, 9}, values(parts.get(2)));
        assertArrayEquals(new long[] {3, 2}, sizes(parts.get(1).split(2))); /* views of views */
        assertArrayEquals(new int[] {5, 6}, values(parts.get(1).split(3L, 2L).get(1)));
        assertArrayEquals(new long[] {10}, sizes(a.split(10L))); /* a long: one row count */
        long[] rows = {6, 4};
        assertArrayEquals(new long[] {6, 4}, sizes(a.split(rows))); /* an array for the varargs */
    }

    /** A misuse throws ArgumentException naming the problem; the array is as it was, usable. */
    void assertRefused(Executable call, String... expected) {
        ArgumentException e = assertThrows(ArgumentException.class, call);
        assertEquals("PG_ERROR_ARGUMENT", e.getStatus());
        for (String s : expected)
            assertTrue(e.getMessage().contains(s), "'" + s + "' not in: " + e.getMessage());
        assertFalse(a.isClosed());
        assertArrayEquals(new int[] {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, values(a));
        try (DeviceArray v = a.slice(1, 3)) {
            assertArrayEquals(new int[] {1, 2}, values(v));
        }
    }

    @Test
    void misuseIsRefusedNamingTheProblem() {
        assertRefused(() -> a.split(0), "split(0)", "1 to 10 views");
        assertRefused(() -> a.split(11), "split(11)", "1 to 10 views");
        assertRefused(() -> a.split(-3), "split(-3)", "1 to 10 views");
        assertRefused(() -> a.split(4, 5), "split(4, 5)", "add up to 9", "has 10 rows");
        assertRefused(() -> a.split(8, 5), "split(8, 5)", "add up to 13", "has 10 rows");
        assertRefused(() -> a.split(10, 0), "split(10, 0)", "row count 1 is 0", "positive");
        assertRefused(() -> a.split(12, -2), "row count 1 is -2", "positive");
        assertRefused(() -> a.split(Long.MAX_VALUE, 5), "add up to more than");
        assertRefused(() -> a.split(new long[0]), "split()", "no row counts");
        assertRefused(() -> a.split((long[]) null), "split(null)");
        assertRefused(() -> a.slice(-1, 5), "slice(-1, 5)", "lo is negative",
                "0 <= lo < hi <= 10");
        assertRefused(() -> a.slice(5, 5), "slice(5, 5)", "empty", "0 <= lo < hi <= 10");
        assertRefused(() -> a.slice(6, 2), "slice(6, 2)", "empty");
        assertRefused(() -> a.slice(0, 11), "slice(0, 11)", "past the array's 10 rows",
                "0 <= lo < hi <= 10");
        DeviceArray v = a.slice(2, 6); /* bounds are the view's own rows */
        ArgumentException e = assertThrows(ArgumentException.class, () -> v.slice(0, 5));
        assertTrue(e.getMessage().contains("past the array's 4 rows"), e.getMessage());
        e = assertThrows(ArgumentException.class, () -> v.split(5));
        assertTrue(e.getMessage().contains("1 to 4 views"), e.getMessage());
        assertArrayEquals(new int[] {2, 3, 4, 5}, values(v));
        /* ArgumentException is the binding's own (a PolygpuException, as every error it maps). */
        assertTrue(e instanceof PolygpuException);
    }

    @Test
    void aMappedArrayIsNotCutAnew() {
        DeviceArray first = a.slice(0, 4); /* cut at row 4 before the map */
        a.asByteBuffer().asIntBuffer().put(6, -6);
        StateException e = assertThrows(StateException.class, () -> a.slice(5, 8));
        assertTrue(e.getMessage().contains("mapped"), e.getMessage());
        e = assertThrows(StateException.class, () -> a.split(2)); /* a new cut at row 5 */
        assertTrue(e.getMessage().contains("mapped"), e.getMessage());
        try (DeviceArray v = a.slice(0, 4)) { /* no new cut: allowed */
            assertEquals(4, v.length());
        }
        a.release();
        try (DeviceArray v = a.slice(5, 8)) {
            assertArrayEquals(new int[] {5, -6, 7}, values(v));
        }
        assertArrayEquals(new int[] {0, 1, 2, 3}, values(first));
    }

    @Test
    void aFailedSplitLeavesNoViewOpen() {
        DeviceArray first = a.slice(0, 2); /* cut at row 2 before the map */
        int before = rt.state.arrays.size();
        a.asByteBuffer(Access.IN);
        /* split(2, 2, 6): the first view (rows 0-1) is made, the second needs a new cut. */
        StateException e = assertThrows(StateException.class, () -> a.split(2, 2, 6));
        assertTrue(e.getMessage().contains("mapped"), e.getMessage());
        assertEquals(before, rt.state.arrays.size()); /* the first view was closed */
        a.release();
        List<DeviceArray> parts = a.split(2, 2, 6);
        assertEquals(before + 3, rt.state.arrays.size());
        assertArrayEquals(values(first), values(parts.get(0)));
    }

    @Test
    void disjointViewsRunOnTwoDevicesWithNoEdgeAndAnOverlapIsOrderedAfterBoth() {
        try (Runtime two = new Runtime(new Runtime.Options().devices("host:2")
                .policy("round-robin"))) {
            Kernel fill = two.kernel(SRC, "fill", FILL_OUT);
            DeviceArray x = two.array(DType.FLOAT32, N);
            List<DeviceArray> halves = x.split(2);
            DeviceArray lo = halves.get(0), hi = halves.get(1), mid = x.slice(H / 2, H + H / 2);
            fill.launch(HALF, BLOCK, lo, 1.0f, H);
            fill.launch(HALF, BLOCK, hi, 2.0f, H);
            fill.launch(HALF, BLOCK, mid, 3.0f, H);
            float[] got = new float[N];
            x.copyTo(got);
            for (int i = 0; i < N; i++)
                assertEquals(i < H / 2 ? 1.0f : i < H + H / 2 ? 3.0f : 2.0f, got[i], "at " + i);
            polygpu.Dag dag = two.dagSnapshot();
            List<polygpu.Dag.Vertex> k = new ArrayList<>();
            for (polygpu.Dag.Vertex v : dag.vertices())
                if (v.kind() == polygpu.Dag.Kind.KERNEL)
                    k.add(v);
            assertEquals(3, k.size());
            long ka = k.get(0).id(), kb = k.get(1).id(), kc = k.get(2).id();
            List<polygpu.Dag.Edge> edges = dag.edges();
            assertFalse(edges.contains(new polygpu.Dag.Edge(ka, kb)), edges.toString());
            assertFalse(edges.contains(new polygpu.Dag.Edge(kb, ka)), edges.toString());
            assertTrue(edges.contains(new polygpu.Dag.Edge(ka, kc)), edges.toString());
            assertTrue(edges.contains(new polygpu.Dag.Edge(kb, kc)), edges.toString());
            assertNotEquals(k.get(0).device(), k.get(1).device()); /* one half per device */
            /* The DAG names the array the views are of. */
            for (polygpu.Dag.Vertex v : k)
                assertEquals(List.of(new polygpu.Dag.Arg(x.id(), Access.OUT)), v.args());
            /* The same reading through the test's own DAG helper (the JSON export). */
            TestSupport.Dag json = TestSupport.Dag.parse(two.dag());
            List<Long> ids = json.ids("kernel");
            assertFalse(json.edge(ids.get(0), ids.get(1)) || json.edge(ids.get(1), ids.get(0)));
            assertTrue(json.edge(ids.get(0), ids.get(2)) && json.edge(ids.get(1), ids.get(2)));
        }
    }

    @Test
    void rowsOfA2DArray() {
        Kernel fill = rt.kernel(SRC, "fill", FILL_OUT);
        DeviceArray m = rt.array(DType.FLOAT32, 8, 16);
        DeviceArray v = m.slice(2, 6), w = v.slice(1, 3); /* rows 3 and 4 of m */
        assertArrayEquals(new long[] {4, 16}, v.shape());
        assertArrayEquals(new long[] {2, 16}, w.shape());
        assertEquals(32, w.length());
        assertEquals(128, w.nbytes());
        fill.launch(new Dim3(1), new Dim3(64), w, 7.0f, 32);
        float[] got = new float[8 * 16];
        m.copyTo(got);
        for (int i = 0; i < got.length; i++)
            assertEquals(i / 16 == 3 || i / 16 == 4 ? 7.0f : 0.0f, got[i], "at " + i);
        assertEquals(0.0f, v.getFloat(15)); /* row 2 of m */
        assertEquals(7.0f, v.getFloat(16)); /* row 3 */
        m.setFloat(4 * 16 + 5, 9.0f);
        assertEquals(9.0f, w.getFloat(16 + 5));
        assertArrayEquals(new long[] {3, 3, 2},
                m.split(3).stream().mapToLong(p -> p.shape()[0]).toArray());
        for (DeviceArray p : m.split(4))
            assertArrayEquals(new long[] {2, 16}, p.shape());
        assertThrows(ArgumentException.class, () -> m.slice(0, 9));
        assertThrows(ArgumentException.class, () -> m.split(9));
    }

    @Test
    void closingTheArrayFirstKeepsItsViews() {
        Kernel fill = rt.kernel(SRC, "fill", FILL_OUT), add1 = rt.kernel(SRC, "add1");
        DeviceArray x = rt.array(DType.FLOAT32, N), y = rt.array(DType.FLOAT32, H);
        List<DeviceArray> halves = x.split(2);
        DeviceArray lo = halves.get(0), hi = halves.get(1);
        fill.launch(GRID, BLOCK, x, 4.0f, N);
        x.close();
        assertTrue(x.isClosed() && x.state.freed());
        assertThrows(IllegalStateException.class, () -> x.getFloat(0));
        assertThrows(IllegalStateException.class, () -> x.slice(0, 1));
        assertFalse(lo.isClosed() || hi.isClosed());
        add1.launch(HALF, BLOCK, y, hi, H);
        hi.close();
        float[] got = new float[H];
        y.copyTo(got);
        for (float f : got)
            assertEquals(5.0f, f);
        lo.copyTo(got);
        for (float f : got)
            assertEquals(4.0f, f);
        DeviceArray lolo = lo.slice(0, 10); /* a view of a view whose array is closed */
        assertEquals(4.0f, lolo.getFloat(9));
        lo.close();
        lolo.setFloat(0, 6.0f);
        assertEquals(6.0f, lolo.getFloat(0));
        assertEquals(4.0f, lolo.getFloat(9));
        lolo.close();
        assertTrue(lolo.state.freed());
    }

    @Test
    void viewsCloseWithTryWithResourcesAndWithTheRuntime() {
        DeviceArray kept;
        try (DeviceArray v = a.slice(3, 7); DeviceArray w = v.slice(1, 2)) {
            v.setInt(0, 30);
            w.setInt(0, 40);
            kept = v;
        }
        assertTrue(kept.isClosed() && kept.state.freed());
        assertThrows(IllegalStateException.class, () -> kept.getInt(0));
        assertThrows(IllegalStateException.class, () -> kept.slice(0, 1));
        kept.close(); /* again: nothing */
        assertArrayEquals(new int[] {0, 1, 2, 30, 40, 5, 6, 7, 8, 9}, values(a));
        List<DeviceArray> parts = a.split(5);
        for (DeviceArray p : parts)
            try (p) {
                p.setInt(1, -1);
            }
        for (DeviceArray p : parts)
            assertTrue(p.isClosed() && p.state.freed());
        assertArrayEquals(new int[] {0, -1, 2, -1, 40, -1, 6, -1, 8, -1}, values(a));
        /* Closing the runtime closes the views it still has. */
        DeviceArray open = a.slice(0, 2);
        rt.close();
        assertTrue(open.isClosed());
        assertThrows(IllegalStateException.class, () -> open.getInt(0));
        open.close(); /* harmless after the runtime freed it */
    }
}
