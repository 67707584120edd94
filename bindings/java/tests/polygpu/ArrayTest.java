package polygpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static polygpu.TestSupport.BLOCK;
import static polygpu.TestSupport.GRID;
import static polygpu.TestSupport.N;
import static polygpu.TestSupport.SRC;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.ReadOnlyBufferException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Shapes, typed element access, bulk copies and host views. */
class ArrayTest {
    Runtime rt;

    @BeforeEach
    void setUp() {
        rt = TestSupport.runtime(null);
    }

    @AfterEach
    void tearDown() {
        rt.close();
    }

    @Test
    void shapeLengthDtype() {
        DeviceArray a = rt.array("float64", 3, 4, 5);
        assertArrayEquals(new long[] {3, 4, 5}, a.shape());
        assertEquals(60, a.length());
        assertEquals(DType.FLOAT64, a.dtype());
        assertEquals(480, a.nbytes());
        a.shape()[0] = 99; /* a copy */
        assertEquals(3, a.shape()[0]);
        DeviceArray b = rt.array(DType.UINT8, 7);
        assertEquals("uint8", b.dtype().typeName());
        assertTrue(b.id() != a.id());
        assertEquals(DType.INT16, DType.parse("int16"));
    }

    @Test
    void floatAccessorsAndKernel() {
        DeviceArray y = rt.array("float32", N);
        y.setFloat(0, 1.5f);
        y.setFloat(N - 1, -2.25f);
        rt.kernel(SRC, "scale").launch(GRID, BLOCK, y, 2.0f, N);
        assertEquals(3.0f, y.getFloat(0));
        assertEquals(-4.5f, y.getFloat(N - 1));
        assertEquals(0.0f, y.getFloat(1));
    }

    @Test
    void doubleAccessorsAndKernel() {
        DeviceArray y = rt.array(DType.FLOAT64, N);
        y.setDouble(3, 1.0 / 3);
        rt.kernel(SRC, "dscale").launch(GRID, BLOCK, y, 3.0, N);
        assertEquals(1.0 / 3 * 3.0, y.getDouble(3));
    }

    @Test
    void intAccessorsAndKernel() {
        DeviceArray y = rt.array("int32", N);
        y.setInt(10, -7);
        y.setInt(11, Integer.MAX_VALUE - 5);
        rt.kernel(SRC, "iadd").launch(GRID, BLOCK, y, 5, N);
        assertEquals(-2, y.getInt(10));
        assertEquals(Integer.MAX_VALUE, y.getInt(11));
        assertEquals(5, y.getInt(0));
        DeviceArray u = rt.array("uint32", 2);
        u.setInt(0, -1);
        assertEquals(0xffffffffL, Integer.toUnsignedLong(u.getInt(0)));
    }

    @Test
    void longAccessorsAndKernel() {
        DeviceArray y = rt.array("int64", N);
        y.setLong(2, 1L << 40);
        rt.kernel(SRC, "ladd").launch(GRID, BLOCK, y, 1L << 33, N);
        assertEquals((1L << 40) + (1L << 33), y.getLong(2));
        assertEquals(1L << 33, y.getLong(0));
    }

    @Test
    void shortAndByteScalars() {
        DeviceArray y = rt.array("int16", N);
        y.setShort(4, (short) -300);
        rt.kernel(SRC, "sadd").launch(GRID, BLOCK, y, (short) 100, (byte) -1, N);
        assertEquals((short) -201, y.getShort(4));
        assertEquals((short) 99, y.getShort(5));
        DeviceArray b = rt.array("int8", 4);
        b.setByte(1, (byte) -128);
        assertEquals((byte) -128, b.getByte(1));
        DeviceArray ub = rt.array("uint8", 4);
        ub.setByte(2, (byte) 200);
        assertEquals(200, Byte.toUnsignedInt(ub.getByte(2)));
        DeviceArray us = rt.array("uint16", 4);
        us.setShort(3, (short) 65535);
        assertEquals(65535, Short.toUnsignedInt(us.getShort(3)));
        DeviceArray ul = rt.array("uint64", 4);
        ul.setLong(0, -1L);
        assertEquals(-1L, ul.getLong(0));
    }

    @Test
    void typeMismatchIsAnArgumentError() {
        DeviceArray f = rt.array("float32", 4);
        DeviceArray i = rt.array("int32", 4);
        assertThrows(ArgumentException.class, () -> f.getDouble(0));
        assertThrows(ArgumentException.class, () -> f.getInt(0));
        assertThrows(ArgumentException.class, () -> f.setLong(0, 1));
        assertThrows(ArgumentException.class, () -> i.getFloat(0));
        assertThrows(ArgumentException.class, () -> i.setShort(0, (short) 1));
        assertThrows(ArgumentException.class, () -> i.getByte(0));
        assertThrows(ArgumentException.class, () -> f.copyTo(new double[4]));
        assertThrows(ArgumentException.class, () -> i.copyFrom(new long[4]));
        ArgumentException e = assertThrows(ArgumentException.class, () -> f.getInt(1));
        assertTrue(e.getMessage().contains("float32"), e.getMessage());
        assertEquals("PG_ERROR_ARGUMENT", e.getStatus());
    }

    @Test
    void typeMismatchNamesTheAccessorAndTheDtypes() {
        DeviceArray f = rt.array("float32", 4);
        DeviceArray u = rt.array("uint16", 4);
        String[][] cases = {
            {message(() -> f.getByte(0)), "getByte needs an array of int8 or uint8"},
            {message(() -> f.setShort(0, (short) 1)), "setShort needs an array of int16 or uint16"},
            {message(() -> u.getFloat(0)), "getFloat needs an array of float32; this array holds "
                    + "uint16"},
            {message(() -> u.setDouble(0, 1)), "setDouble needs an array of float64"},
            {message(() -> f.copyFrom(new long[4])), "copyFrom(long[]) needs an array of int64 or "
                    + "uint64"},
            {message(() -> f.copyTo(0, new int[4], 0, 4)), "copyTo(int[]) needs an array of int32 "
                    + "or uint32; this array holds float32"},
        };
        for (String[] c : cases)
            assertTrue(c[0].contains(c[1]), c[0]);
        /* Unsigned arrays take the signed type's bits, both ways. */
        u.setShort(0, (short) -1);
        assertEquals(65535, Short.toUnsignedInt(u.getShort(0)));
        short[] back = new short[4];
        u.copyTo(back);
        assertEquals((short) -1, back[0]);
    }

    private static String message(org.junit.jupiter.api.function.Executable call) {
        return assertThrows(ArgumentException.class, call).getMessage();
    }

    @Test
    void indexOutOfRange() {
        DeviceArray f = rt.array("float32", 4);
        assertThrows(IndexOutOfBoundsException.class, () -> f.getFloat(4));
        assertThrows(IndexOutOfBoundsException.class, () -> f.setFloat(-1, 0));
        assertThrows(IndexOutOfBoundsException.class, () -> f.copyFrom(new float[5]));
        assertThrows(IndexOutOfBoundsException.class, () -> f.copyTo(2, new float[4], 0, 3));
        assertThrows(IndexOutOfBoundsException.class, () -> f.copyTo(0, new float[4], 3, 2));
    }

    @Test
    void bulkCopiesOfEveryJavaType() {
        float[] fs = {1.5f, -2, 3, Float.NaN};
        DeviceArray f = rt.array("float32", 4);
        f.copyFrom(fs);
        float[] fb = new float[4];
        f.copyTo(fb);
        assertArrayEquals(fs, fb);

        double[] ds = {Math.PI, -0.0, 1e300};
        DeviceArray d = rt.array("float64", 3);
        d.copyFrom(ds);
        double[] db = new double[3];
        d.copyTo(db);
        assertArrayEquals(ds, db);

        int[] is = {Integer.MIN_VALUE, 0, 42};
        DeviceArray i = rt.array("int32", 3);
        i.copyFrom(is);
        int[] ib = new int[3];
        i.copyTo(ib);
        assertArrayEquals(is, ib);

        long[] ls = {Long.MIN_VALUE, 7, Long.MAX_VALUE};
        DeviceArray l = rt.array("uint64", 3);
        l.copyFrom(ls);
        long[] lb = new long[3];
        l.copyTo(lb);
        assertArrayEquals(ls, lb);

        short[] ss = {-1, 2, Short.MAX_VALUE};
        DeviceArray s = rt.array("int16", 3);
        s.copyFrom(ss);
        short[] sb = new short[3];
        s.copyTo(sb);
        assertArrayEquals(ss, sb);

        byte[] bs = {-128, 0, 127};
        DeviceArray b = rt.array("uint8", 3);
        b.copyFrom(bs);
        byte[] bb = new byte[3];
        b.copyTo(bb);
        assertArrayEquals(bs, bb);
    }

    @Test
    void bulkCopiesWithOffsetsAreOneHostAccessEach() {
        DeviceArray a = rt.array("float32", 10);
        float[] src = {0, 1, 2, 3, 4, 5};
        long before = rt.stats().hostAccesses();
        a.copyFrom(4, src, 2, 4); /* a[4..7] = 2, 3, 4, 5 */
        assertEquals(before + 1, rt.stats().hostAccesses());
        float[] dst = new float[8];
        a.copyTo(3, dst, 1, 6); /* dst[1..6] = a[3..8] */
        assertEquals(before + 2, rt.stats().hostAccesses());
        assertArrayEquals(new float[] {0, 0, 2, 3, 4, 5, 0, 0}, dst);
        rt.kernel(SRC, "scale").launch(new Dim3(1), new Dim3(32), a, 10.0f, 10);
        a.copyTo(0, dst, 0, 8);
        assertArrayEquals(new float[] {0, 0, 0, 0, 20, 30, 40, 50}, dst);
    }

    @Test
    void directByteBuffers() {
        DeviceArray a = rt.array("int32", 8);
        ByteBuffer src = ByteBuffer.allocateDirect(8 * 4).order(ByteOrder.nativeOrder());
        for (int i = 0; i < 8; i++)
            src.putInt(i * 10);
        src.flip();
        a.copyFrom(src);
        assertEquals(src.limit(), src.position(), "the buffer is consumed");
        assertEquals(70, a.getInt(7));

        ByteBuffer dst = ByteBuffer.allocateDirect(4 * 4).order(ByteOrder.nativeOrder());
        a.copyTo(2, dst);
        dst.flip();
        assertEquals(20, dst.getInt(0));
        assertEquals(50, dst.getInt(12));

        ByteBuffer part = ByteBuffer.allocateDirect(16).order(ByteOrder.nativeOrder());
        part.putInt(-5).flip();
        a.copyFrom(6, part);
        assertEquals(-5, a.getInt(6));

        assertThrows(ArgumentException.class, () -> a.copyFrom(ByteBuffer.allocate(8)),
                "heap buffers are refused");
        assertThrows(ArgumentException.class, () -> a.copyFrom(ByteBuffer.allocateDirect(6)),
                "not whole elements");
        assertThrows(IndexOutOfBoundsException.class,
                () -> a.copyTo(7, ByteBuffer.allocateDirect(8)));
    }

    @Test
    void byteBufferViewIsZeroCopyUntilReleased() {
        DeviceArray a = rt.array("float32", N);
        rt.kernel(SRC, "fill").launch(GRID, BLOCK, a, 3.0f, N);
        ByteBuffer view = a.asByteBuffer();
        assertTrue(view.isDirect());
        assertEquals(ByteOrder.nativeOrder(), view.order());
        assertEquals(N * 4, view.capacity());
        assertEquals(3.0f, view.getFloat(4 * 17), "the view waited for the writer");
        view.putFloat(4 * 17, 8.0f);
        long accesses = rt.stats().hostAccesses();
        a.release();
        assertEquals(8.0f, a.getFloat(17), "writes through the view reach the array");
        assertEquals(accesses + 1, rt.stats().hostAccesses());

        ByteBuffer ro = a.asByteBuffer(Access.IN);
        assertTrue(ro.isReadOnly());
        assertEquals(8.0f, ro.getFloat(4 * 17));
        assertThrows(ReadOnlyBufferException.class, () -> ro.putFloat(0, 1.0f));
        ByteBuffer nested = a.asByteBuffer(Access.IN);
        assertEquals(3.0f, nested.asFloatBuffer().get(0));
        a.release();
        a.release();
        assertThrows(StateException.class, a::release, "no view left to release");

        ByteBuffer out = a.asByteBuffer(Access.OUT);
        for (int i = 0; i < N; i++)
            out.putFloat(1.0f);
        a.release();
        rt.kernel(SRC, "scale").launch(GRID, BLOCK, a, 4.0f, N);
        assertEquals(4.0f, a.getFloat(N - 1));
    }

    @Test
    void closingAnArrayWithAnOpenViewReleasesIt() {
        DeviceArray a = rt.array("float32", 16);
        a.asByteBuffer();
        a.close();
        assertTrue(a.isClosed());
        assertFalse(rt.isClosed());
        rt.sync();
    }
}
