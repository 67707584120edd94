package polygpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static polygpu.TestSupport.BLOCK;
import static polygpu.TestSupport.FILL_OUT;
import static polygpu.TestSupport.GRID;
import static polygpu.TestSupport.N;
import static polygpu.TestSupport.SRC;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import polygpu.TestSupport.Dag;

/** Dependencies the runtime infers from access modes, asserted on the exported DAG's edges. */
class DagTest {
    Runtime rt;
    Kernel fill, fillOut, add1, sum2;
    DeviceArray a, b, c, d;

    @BeforeEach
    void setUp() {
        rt = TestSupport.runtime("round-robin");
        fill = rt.kernel(SRC, "fill");
        fillOut = rt.kernel(SRC, "fill", FILL_OUT);
        add1 = rt.kernel(SRC, "add1");
        sum2 = rt.kernel(SRC, "sum2", "out float *y, in const float *a, in const float *b, int n");
        a = rt.array(DType.FLOAT32, N);
        b = rt.array(DType.FLOAT32, N);
        c = rt.array(DType.FLOAT32, N);
        d = rt.array(DType.FLOAT32, N);
    }

    @AfterEach
    void tearDown() {
        rt.close();
    }

    /** The kernel vertices, oldest first. */
    List<Long> kernels() {
        return Dag.of(rt).ids("kernel");
    }

    @Test
    void independentLaunchesHaveNoEdge() {
        fillOut.launch(GRID, BLOCK, a, 1.0f, N);
        fillOut.launch(GRID, BLOCK, b, 2.0f, N);
        Dag dag = Dag.of(rt);
        List<Long> k = dag.ids("kernel");
        assertEquals(2, k.size());
        assertFalse(dag.edge(k.get(0), k.get(1)));
        assertEquals(1.0f, a.getFloat(N - 1));
        assertEquals(2.0f, b.getFloat(0));
    }

    @Test
    void chainHasEdgesAlongItOnly() {
        fillOut.launch(GRID, BLOCK, a, 1.0f, N);
        add1.launch(GRID, BLOCK, b, a, N);
        add1.configure(GRID, BLOCK).launch(c, b, N);
        Dag dag = Dag.of(rt);
        List<Long> k = dag.ids("kernel");
        assertTrue(dag.edge(k.get(0), k.get(1)));
        assertTrue(dag.edge(k.get(1), k.get(2)));
        assertFalse(dag.edge(k.get(0), k.get(2)), "no transitive edge");
        assertEquals(3.0f, c.getFloat(N / 2));
    }

    @Test
    void diamond() {
        fillOut.launch(GRID, BLOCK, a, 3.0f, N);
        add1.launch(GRID, BLOCK, b, a, N);
        add1.launch(GRID, BLOCK, c, a, N);
        sum2.launch(GRID, BLOCK, d, b, c, N);
        Dag dag = Dag.of(rt);
        List<Long> k = dag.ids("kernel");
        assertTrue(dag.edge(k.get(0), k.get(1)) && dag.edge(k.get(0), k.get(2)));
        assertTrue(dag.edge(k.get(1), k.get(3)) && dag.edge(k.get(2), k.get(3)));
        assertFalse(dag.edge(k.get(1), k.get(2)) || dag.edge(k.get(2), k.get(1)));
        float[] out = new float[N];
        d.copyTo(out);
        for (float v : out)
            assertEquals(8.0f, v);
    }

    @Test
    void twoReadersOfAConstArrayAreNotOrdered() {
        fillOut.launch(GRID, BLOCK, a, 1.0f, N);
        add1.launch(GRID, BLOCK, b, a, N);
        add1.launch(GRID, BLOCK, c, a, N);
        Dag dag = Dag.of(rt);
        List<Long> k = dag.ids("kernel");
        assertFalse(dag.edge(k.get(1), k.get(2)));
        assertTrue(dag.edge(k.get(0), k.get(1)) && dag.edge(k.get(0), k.get(2)));
        assertEquals(2.0f, b.getFloat(1));
        assertEquals(2.0f, c.getFloat(1));
    }

    @Test
    void writeAfterReadWaitsForTheReader() {
        fillOut.launch(GRID, BLOCK, a, 1.0f, N);
        add1.launch(GRID, BLOCK, b, a, N); /* reads a */
        fill.launch(GRID, BLOCK, a, 5.0f, N); /* inout a */
        Dag dag = Dag.of(rt);
        List<Long> k = dag.ids("kernel");
        assertTrue(dag.edge(k.get(1), k.get(2)), "write after read");
        assertTrue(dag.edge(k.get(0), k.get(2)), "write after write");
        assertEquals(2.0f, b.getFloat(7), "the reader saw the old value");
        assertEquals(5.0f, a.getFloat(7));
    }

    @Test
    void hostReadWaitsOnlyForItsWriter() {
        fillOut.launch(GRID, BLOCK, a, 4.0f, N);
        fillOut.launch(GRID, BLOCK, b, 6.0f, N);
        assertEquals(4.0f, a.getFloat(3));
        Dag dag = Dag.of(rt);
        List<Long> k = dag.ids("kernel");
        List<Long> reads = dag.ids("host_read");
        long hr = reads.get(reads.size() - 1);
        assertTrue(dag.edge(k.get(0), hr));
        assertFalse(dag.edge(k.get(1), hr));
    }

    @Test
    void hostWriteWaitsForWriterAndReaders() {
        fillOut.launch(GRID, BLOCK, a, 1.0f, N);
        add1.launch(GRID, BLOCK, b, a, N);
        float[] ones = new float[N];
        java.util.Arrays.fill(ones, 1.0f);
        a.copyFrom(ones);
        Dag dag = Dag.of(rt);
        List<Long> k = dag.ids("kernel");
        List<Long> writes = dag.ids("host_write");
        long hw = writes.get(writes.size() - 1);
        assertTrue(dag.edge(k.get(0), hw) && dag.edge(k.get(1), hw));
    }

    @Test
    void verticesNameTheKernelDeviceAndArrays() {
        fillOut.launch(GRID, BLOCK, a, 1.0f, N);
        add1.launch(GRID, BLOCK, b, a, N);
        rt.sync();
        String json = rt.dag();
        Dag dag = Dag.parse(json);
        TestSupport.Vertex v = dag.vertex(dag.ids("kernel").get(1));
        assertEquals("add1", v.name());
        assertTrue(v.device() >= 0 && v.device() < rt.devices().size());
        assertTrue(json.contains("{\"array\":" + a.id() + ",\"access\":\"in\"}"), json);
        assertTrue(json.contains("{\"array\":" + b.id() + ",\"access\":\"inout\"}"), json);
    }

    /** A runtime on one device of the kind PG_DEVICES selects. */
    static Runtime oneDevice() {
        String spec = System.getenv().getOrDefault("PG_DEVICES", "host:4");
        return new Runtime(new Runtime.Options().devices(spec.startsWith("cuda") ? "cuda:0"
                : "host:1").policy("round-robin"));
    }

    @Test
    void snapshotOfAKnownProgramFieldByField() {
        polygpu.Dag first, later;
        DeviceArray x, y;
        try (Runtime one = oneDevice()) {
            Kernel w = one.kernel(SRC, "fill", FILL_OUT), r = one.kernel(SRC, "add1");
            x = one.array(DType.FLOAT32, N);
            y = one.array(DType.FLOAT32, N);
            w.launch(GRID, BLOCK, x, 1.0f, N); /* k1 writes x */
            r.launch(GRID, BLOCK, y, x, N); /* k2 reads x: one edge k1 -> k2 */
            first = one.dagSnapshot();
            assertEquals(2.0f, y.getFloat(0)); /* a host read, and y's copy to the host */
            later = one.dagSnapshot();
            long xid = x.id(), yid = y.id();
            assertEquals(2, first.vertices().size());
            polygpu.Dag.Vertex k1 = first.vertices().get(0), k2 = first.vertices().get(1);
            assertEquals(polygpu.Dag.Kind.KERNEL, k1.kind());
            assertEquals("fill", k1.name());
            assertEquals("add1", k2.name());
            assertTrue(k1.id() > 0 && k2.id() > k1.id(), "oldest first");
            assertEquals(0, k1.device());
            assertEquals(0, k2.device());
            assertTrue(k1.stream() >= 0 && k2.stream() >= 0);
            assertEquals(List.of(new polygpu.Dag.Arg(xid, Access.OUT)), k1.args());
            assertEquals(List.of(new polygpu.Dag.Arg(yid, Access.INOUT),
                    new polygpu.Dag.Arg(xid, Access.IN)), k2.args());
            assertTrue(k1.submitNs() <= k2.submitNs());
            assertEquals(0, k1.bytes());
            assertEquals(List.of(new polygpu.Dag.Edge(k1.id(), k2.id())), first.edges());
            assertEquals(k2, first.vertex(k2.id()).orElseThrow());

            assertEquals(4, later.vertices().size());
            polygpu.Dag.Vertex read = later.vertices().get(2), copy = later.vertices().get(3);
            assertEquals(polygpu.Dag.Kind.HOST_READ, read.kind());
            assertEquals(-1, read.device());
            assertEquals(-1, read.stream());
            assertEquals(List.of(new polygpu.Dag.Arg(yid, Access.IN)), read.args());
            assertEquals(polygpu.Dag.Kind.COPY, copy.kind());
            assertEquals(4L * N, copy.bytes());
            assertEquals(0, copy.src());
            assertEquals(-1, copy.dst());
            assertEquals(java.util.Set.of(new polygpu.Dag.Edge(k1.id(), k2.id()),
                    new polygpu.Dag.Edge(k2.id(), read.id()),
                    new polygpu.Dag.Edge(k2.id(), copy.id()),
                    new polygpu.Dag.Edge(copy.id(), read.id())),
                    new java.util.HashSet<>(later.edges()));
            assertEquals(4, later.edges().size());
            assertEquals(2, first.vertices().size(), "the earlier snapshot is unchanged");
            /* The JSON export holds the same vertices and edges. */
            one.sync();
            polygpu.Dag now = one.dagSnapshot();
            Dag json = Dag.parse(one.dag());
            assertEquals(now.vertices().size(), json.vertices.size());
            for (int i = 0; i < json.vertices.size(); i++) {
                polygpu.Dag.Vertex v = now.vertices().get(i);
                assertEquals(new TestSupport.Vertex(v.id(),
                        v.kind().name().toLowerCase(java.util.Locale.ROOT), v.name(), v.device(),
                        v.stream()), json.vertices.get(i));
            }
            assertEquals(now.edges().size(), json.edges.size());
            for (int i = 0; i < json.edges.size(); i++)
                assertEquals(now.edges().get(i),
                        new polygpu.Dag.Edge(json.edges.get(i)[0], json.edges.get(i)[1]));
        }
        /* Snapshots outlive the runtime. */
        assertEquals(4, later.vertices().size());
        assertEquals("add1", later.vertices().get(1).name());
        assertTrue(later.vertex(-5).isEmpty());
    }

    @Test
    void snapshotOfAClosedRuntimeIsRefused() {
        Runtime one = oneDevice();
        one.close();
        org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                one::dagSnapshot);
    }

    @Test
    void exportsDotJsonAndTrace(@TempDir Path dir) throws Exception {
        fillOut.launch(GRID, BLOCK, a, 1.0f, N);
        add1.launch(GRID, BLOCK, b, a, N);
        rt.sync();
        assertTrue(rt.dagDot().contains("digraph"));
        Path dot = dir.resolve("dag.dot"), json = dir.resolve("dag.json");
        Path trace = dir.resolve("trace.json");
        rt.exportDag(dot.toString());
        rt.exportDag(json.toString());
        rt.writeTrace(trace.toString());
        String dotText = Files.readString(dot);
        assertTrue(dotText.contains("digraph") && dotText.contains("add1"), dotText);
        assertTrue(dotText.contains("->"), dotText);
        assertEquals(2, Dag.parse(Files.readString(json)).ids("kernel").size());
        assertTrue(Files.readString(trace).contains("traceEvents"));
    }
}
