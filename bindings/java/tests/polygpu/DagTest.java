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
