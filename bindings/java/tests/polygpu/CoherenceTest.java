package polygpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static polygpu.TestSupport.BLOCK;
import static polygpu.TestSupport.FILL_OUT;
import static polygpu.TestSupport.GRID;
import static polygpu.TestSupport.N;
import static polygpu.TestSupport.SRC;

import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;
import polygpu.TestSupport.Dag;

/**
 * Which locations hold each array's value and what moved over which link, through stats() and
 * validLocations(). Devices are read from the DAG, so any device count works.
 */
class CoherenceTest {
    static final long BYTES = N * 4L;
    static final int HOST = 1;

    static int dev(int d) {
        return 1 << (d + 1);
    }

    /** The device of the newest kernel vertex. */
    static int lastKernelDevice(Runtime rt) {
        Dag dag = Dag.of(rt);
        List<Long> k = dag.ids("kernel");
        return dag.vertex(k.get(k.size() - 1)).device();
    }

    @Test
    void copiesOnlyWhatIsNeeded() {
        try (Runtime rt = TestSupport.runtime("round-robin")) {
            Kernel add1 = rt.kernel(SRC, "add1");
            Kernel fillOut = rt.kernel(SRC, "fill", FILL_OUT);
            DeviceArray a = rt.array("float32", N), b = rt.array("float32", N);
            int ndev = rt.devices().size();

            /* A new array is zeros, valid everywhere, and nothing has moved. */
            assertEquals((1 << (ndev + 1)) - 1, a.validLocations());
            assertEquals(0.0f, a.getFloat(5));
            assertEquals(0, rt.stats().bytesMoved());

            /* A whole-array host write leaves only the host valid. */
            float[] ramp = new float[N];
            for (int i = 0; i < N; i++)
                ramp[i] = i;
            a.copyFrom(ramp);
            assertEquals(HOST, a.validLocations());

            /* A kernel reading a copies it to its device, once. */
            add1.launch(GRID, BLOCK, b, a, N);
            rt.sync();
            int d0 = lastKernelDevice(rt);
            Stats st = rt.stats();
            assertEquals(BYTES, st.linkBytes(0, d0 + 1));
            assertEquals(HOST | dev(d0), a.validLocations());
            assertEquals(dev(d0), b.validLocations());

            /* A host read copies the device's value back once; a second read moves nothing. */
            assertEquals(11.0f, b.getFloat(10));
            st = rt.stats();
            assertEquals(BYTES, st.linkBytes(d0 + 1, 0));
            long moved = st.bytesMoved();
            assertEquals(12.0f, b.getFloat(11));
            assertEquals(moved, rt.stats().bytesMoved());
            assertEquals(HOST | dev(d0), b.validLocations());

            /* An out-only write copies nothing in and leaves only its device valid. */
            fillOut.launch(GRID, BLOCK, a, 7.0f, N);
            rt.sync();
            int d1 = lastKernelDevice(rt);
            assertEquals(moved, rt.stats().bytesMoved());
            assertEquals(dev(d1), a.validLocations());

            /* A partial host write brings the host copy up to date first. */
            long before = rt.stats().linkBytes(d1 + 1, 0);
            a.setFloat(0, 9.0f);
            assertEquals(before + BYTES, rt.stats().linkBytes(d1 + 1, 0));
            assertEquals(HOST, a.validLocations());
            float[] back = new float[3];
            a.copyTo(back);
            assertEquals(9.0f, back[0]);
            assertEquals(7.0f, back[1]);
            assertEquals(7.0f, back[2]);

            /* The counters add up. */
            st = rt.stats();
            long sum = 0;
            for (int s = 0; s <= ndev; s++)
                for (int t = 0; t <= ndev; t++)
                    sum += st.linkBytes(s, t);
            assertEquals(sum, st.bytesMoved());
            assertEquals(2, st.kernels());
            assertEquals(st.kernels() + st.hostAccesses() + st.copies(), st.computations());
            assertEquals(ndev, st.ndevices());
            assertEquals(Dag.of(rt).ids("copy").size(), st.copies());
        }
    }

    @Test
    void prefetchCopiesOnceAndIsOrderedBeforeTheNextWriter() {
        try (Runtime rt = TestSupport.runtime("round-robin")) {
            Kernel fillOut = rt.kernel(SRC, "fill", FILL_OUT);
            DeviceArray y = rt.array("float32", N);
            int ndev = rt.devices().size();
            fillOut.launch(GRID, BLOCK, y, 4.0f, N);
            long before = rt.stats().bytesMoved();
            y.prefetch();
            assertTrue((y.validLocations() & HOST) != 0);
            rt.sync();
            assertEquals(before + BYTES, rt.stats().bytesMoved());
            assertEquals(4.0f, y.getFloat(N - 1));
            assertEquals(before + BYTES, rt.stats().bytesMoved());

            float[] back = new float[N];
            for (int v = 1; v <= 5; v++) {
                fillOut.launch(GRID, BLOCK, y, (float) v, N);
                y.prefetch();
                fillOut.launch(GRID, BLOCK, y, 10.0f * v, N);
                y.copyTo(back);
                for (int i = 0; i < N; i++)
                    assertEquals(10.0f * v, back[i]);
            }

            DeviceArray x = rt.array("float32", N);
            x.setFloat(0, 1.0f);
            x.prefetch(ndev - 1);
            rt.sync();
            assertEquals(HOST | dev(ndev - 1), x.validLocations());
            ArgumentException e =
                    org.junit.jupiter.api.Assertions.assertThrows(ArgumentException.class,
                            () -> x.prefetch(ndev));
            assertTrue(e.getMessage().contains("location"), e.getMessage());
            assertEquals(1.0f, x.getFloat(0));
            x.close();
            org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, x::prefetch);
        }
    }

    @Test
    void hostViewHoldsBackConflictingKernels() {
        try (Runtime rt = TestSupport.runtime(null)) {
            Kernel add1 = rt.kernel(SRC, "add1");
            DeviceArray a = rt.array("float32", N), b = rt.array("float32", N);
            ByteBuffer view = a.asByteBuffer();
            assertEquals(HOST, a.validLocations(), "a writable view makes the host the only copy");
            for (int i = 0; i < N; i++)
                view.putFloat(i * 4, 2.0f * i);
            /* The launch is accepted at once and waits for the release. */
            add1.launch(GRID, BLOCK, b, a, N);
            assertTrue(rt.stats().pending() >= 1, rt.stats().toString());
            a.release();
            assertEquals(2.0f * 5 + 1, b.getFloat(5));
            assertEquals(2.0f * (N - 1) + 1, b.getFloat(N - 1));
            assertEquals(0, rt.stats().pending());
        }
    }
}
