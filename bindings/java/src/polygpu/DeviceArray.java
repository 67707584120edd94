package polygpu;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An array of a {@link Runtime}: one host copy plus one per device that used it; the runtime
 * knows which copies hold the current value and copies only when needed.
 *
 * <p>Every host access (an element get or set, a bulk copy, a host view) is one computation in
 * the runtime's DAG: it waits for the array's last writer only (and, when it writes, for the
 * readers since), never for unrelated work. Typed accessors check the element type: {@code
 * getFloat} needs a {@link DType#FLOAT32} array, {@code getInt} an {@code INT32} or {@code UINT32}
 * one, and so on by width; a mismatch throws {@link ArgumentException}. Indices are flat,
 * row-major. Multi-byte values travel in the platform's native byte order.
 *
 * <p>{@link #close()} frees the array (work still using it keeps its memory until it ends); an
 * array the program drops is freed by a {@link Cleaner}. Calls on a closed array, or on an array
 * of a closed runtime, throw {@link IllegalStateException}. A host view ({@link #asByteBuffer})
 * never points at freed memory: the memory it shows is freed only once the view's buffers are
 * unreachable, whatever was closed before.
 *
 * <p><b>Views of rows.</b> {@link #slice(long, long)} and {@link #split(int)} give arrays that
 * view consecutive rows (along the first axis) of this one and share its elements: a write
 * through either shows in the other. Kernels on disjoint views have no dependency between them
 * and may run on different devices at once; work on overlapping rows is ordered. A view is an
 * array like any other (a kernel argument, element and bulk access, host views, prefetch, more
 * views) and is closed on its own.
 */
public final class DeviceArray implements AutoCloseable {

    /**
     * The native array; no reference to the DeviceArray object, as the Cleaner requires.
     *
     * <p>A buffer from {@link #asByteBuffer} shows the native array's host memory, and Java has no
     * way to take a buffer back. So the native array is freed only when it is closed (or
     * dropped) and no such buffer is reachable any more: each buffer is "pinned" from its
     * creation until the Cleaner sees it collected, as a {@code MappedByteBuffer}'s mapping lives
     * until the buffer is collected. Lock order: the runtime's lock, then this object's monitor,
     * which guards the counters.
     */
    static final class State implements Runnable {
        final Runtime.State rt;
        final long handle;
        final AtomicBoolean closed = new AtomicBoolean();
        /** Host views not yet released: ended before the free, which refuses a mapped array. */
        private int maps;
        /** Buffers not yet collected, plus host views being taken. */
        private int pins;
        /** Whether the native array was freed. */
        private boolean freed;

        State(Runtime.State rt, long handle) {
            this.rt = rt;
            this.handle = handle;
            rt.arrays.add(this);
        }

        /** close() or the Cleaner: ends the open views; frees the array unless a buffer pins it. */
        @Override
        public void run() {
            rt.lock.readLock().lock();
            try {
                if (closed.getAndSet(true) || rt.closed())
                    return; /* a closed runtime freed its arrays, or frees them with itself */
                synchronized (this) {
                    try {
                        endViews();
                    } finally {
                        if (pins == 0)
                            free();
                    }
                }
            } finally {
                rt.lock.readLock().unlock();
            }
        }

        /** Ends every open view; the caller holds the runtime's lock and this monitor. */
        private void endViews() {
            for (; maps > 0; maps--)
                Native.arrayUnmap(handle);
        }

        /** Frees the native array; the caller holds the runtime's lock and this monitor. */
        private void free() {
            freed = true;
            rt.arrays.remove(this);
            Native.arrayFree(handle);
        }

        /** For a runtime closing while buffers are pinned (its write lock held). */
        synchronized void endViewsForClose() {
            endViews();
        }

        /** For a runtime closing while buffers are pinned: frees this array if none shows it. */
        synchronized void freeUnlessPinned() {
            if (pins == 0 && !freed)
                free();
        }

        /** Whether the native array was freed (for tests). */
        synchronized boolean freed() {
            return freed;
        }

        /** One more buffer, or a view being taken; the caller holds the runtime's read lock. */
        synchronized void pin() {
            pins++;
            rt.pins.incrementAndGet();
        }

        /** A view was taken: count it; false (and nothing counted) if the array was closed. */
        synchronized boolean mapped() {
            if (closed.get())
                return false;
            maps++;
            return true;
        }

        /** Ends the most recent view; the caller holds the runtime's read lock. */
        synchronized void unmap() {
            if (maps <= 0)
                throw new StateException("release: the array has no open host view "
                        + "(asByteBuffer) to release");
            Native.arrayUnmap(handle);
            maps--;
        }

        /**
         * A buffer was collected (the Cleaner), or a view being taken ended without one: frees
         * the array if it was closed and this was its last buffer, and the runtime if it was
         * closed and this was the last buffer of any of its arrays.
         */
        void unpin() {
            boolean lastOfRuntime;
            rt.lock.readLock().lock();
            try {
                synchronized (this) {
                    pins--;
                    if (pins == 0 && !freed && (closed.get() || rt.closed()) && !rt.freed())
                        free();
                }
            } finally {
                lastOfRuntime = rt.pins.decrementAndGet() == 0 && rt.closed();
                rt.lock.readLock().unlock();
            }
            if (lastOfRuntime)
                rt.lastPinDropped();
        }
    }

    /** Keeps the runtime reachable (and so open) while this array is. */
    private final Runtime runtime;
    final State state;
    private final Cleaner.Cleanable cleanable;
    private final DType dtype;
    private final long[] shape;
    private final long length;
    private final long id;
    /** For a view: its first row in the array it views (views of views add up); else -1. */
    private final long firstRow;

    DeviceArray(Runtime runtime, long handle) {
        this(runtime, handle, -1);
    }

    private DeviceArray(Runtime runtime, long handle, long firstRow) {
        this.runtime = runtime;
        this.firstRow = firstRow;
        this.state = new State(runtime.state, handle);
        this.cleanable = Native.CLEANER.register(this, state);
        long[] d;
        try {
            d = Native.arrayDescribe(handle);
        } catch (RuntimeException e) {
            cleanable.clean();
            throw e;
        }
        id = d[0];
        dtype = DType.values()[(int) d[1]];
        shape = new long[(int) d[2]];
        System.arraycopy(d, 3, shape, 0, shape.length);
        length = d[7];
    }

    /** Begins a call: the handle, with the runtime's read lock held. */
    private long enter() {
        runtime.enter();
        if (state.closed.get()) {
            runtime.exit();
            throw new IllegalStateException("polygpu: the array is closed");
        }
        return state.handle;
    }

    private void exit() {
        runtime.exit();
        Reference.reachabilityFence(this);
    }

    /**
     * The handle for a kernel argument; the caller holds the kernel runtime's read lock, and this
     * array must stay reachable until the launch returns.
     */
    long launchHandle() {
        if (state.closed.get() || state.rt.closed())
            throw new IllegalStateException("polygpu: a kernel argument is a closed array");
        return state.handle;
    }

    /**
     * The element type.
     *
     * @return the dtype
     */
    public DType dtype() {
        return dtype;
    }

    /**
     * The dimensions, row-major.
     *
     * @return a copy of the shape
     */
    public long[] shape() {
        return shape.clone();
    }

    /**
     * The number of elements (the product of the shape).
     *
     * @return elements
     */
    public long length() {
        return length;
    }

    /**
     * The size in bytes.
     *
     * @return {@code length() * dtype().size()}
     */
    public long nbytes() {
        return length * dtype.size();
    }

    /**
     * The array's id in the DAG export ({@code "array"} of each vertex's {@code "args"}). A view
     * ({@link #slice}, {@link #split(int)}) has the id of the array it views: the DAG names that
     * array for work on any of its rows.
     *
     * @return the id
     */
    public long id() {
        return id;
    }

    /**
     * The locations that hold the current value now, as planned by the scheduler: bit 0 the
     * host, bit {@code d + 1} device {@code d}.
     *
     * @return the location bitmask
     */
    public int validLocations() {
        long h = enter();
        try {
            return (int) Native.arrayDescribe(h)[9];
        } finally {
            exit();
        }
    }

    /**
     * Starts copying the current value to the host and returns at once, so that a later read
     * finds it there. Call it on results right after the launches that make them: their copies
     * then overlap the rest of the work. The copy is ordered after the array's last writer and
     * before its next one; where the host already holds the value, or the value is not known
     * yet (an open writable host mapping), it does nothing.
     *
     * @throws IllegalStateException if the array or its runtime was closed
     */
    public void prefetch() {
        prefetch(-1);
    }

    /**
     * Starts copying the current value to device {@code device} ({@code -1}: the host) and
     * returns at once; see {@link #prefetch()}.
     *
     * @param device a device id (from {@link Runtime#devices()}), or {@code -1} for the host
     * @throws ArgumentException if {@code device} is neither {@code -1} nor a device id
     * @throws IllegalStateException if the array or its runtime was closed
     */
    public void prefetch(int device) {
        long h = enter();
        try {
            Native.arrayPrefetch(h, device);
        } finally {
            exit();
        }
    }

    /* ------------------------------------------------------------ views of rows */

    /** The number of rows along the first axis. */
    private long rows() {
        return shape[0];
    }

    /**
     * A view of rows {@code lo} (included) to {@code hi} (excluded) along the first axis, as
     * {@link java.util.List#subList} and {@link String#substring(int, int)} take a range: a new
     * array of shape {@code [hi - lo, shape()[1], ...]} that shares this array's elements, not a
     * copy. Writes through the view show in this array and writes to this array's rows show in
     * the view; element indices of the view start at its first row.
     *
     * <p>The view is usable wherever an array is: a kernel argument (a pointer to its first
     * element), element and bulk access, {@link #asByteBuffer} (its rows of this array's host
     * memory), {@link #prefetch}, and further views (a view of a view views the same array).
     * Dependencies follow the rows: kernels writing disjoint views have no edge between them in
     * the DAG and may run on different devices at once, while work on rows that overlap is
     * ordered; a read copies only the rows that are stale where it runs. The view has this
     * array's {@link #id()}.
     *
     * <p>Close the view when done, for example with try-with-resources; a view the program drops
     * is freed by the {@link Cleaner}. Views and the array they view are closed independently:
     * closing the array first keeps its memory until its last view is closed, and closing the
     * runtime closes them all.
     *
     * <pre>{@code
     * try (DeviceArray head = x.slice(0, 500); DeviceArray tail = x.slice(500, 1000)) {
     *     fill.launch(grid, block, head, 1.0f, 500); // these two may run at once,
     *     fill.launch(grid, block, tail, 2.0f, 500); // on two devices
     * }
     * }</pre>
     *
     * @param lo the first row of the view, from 0
     * @param hi one past its last row, at most {@code shape()[0]}
     * @return the view, a new array to close
     * @throws ArgumentException unless {@code 0 <= lo < hi <= shape()[0]} (the message names the
     *         bound that fails); the array is unchanged and stays usable
     * @throws StateException if {@code lo} or {@code hi} would cut the array where no view cut
     *         it before while it is mapped by an open host view ({@link #asByteBuffer}), or used
     *         by work held back behind one
     * @throws IllegalStateException if the array or its runtime was closed
     */
    public DeviceArray slice(long lo, long hi) {
        String call = "slice(" + lo + ", " + hi + ")";
        long rows = rows();
        String expected = "; expected 0 <= lo < hi <= " + rows + " (the array's rows along its "
                + "first axis, hi excluded)";
        if (lo < 0)
            throw new ArgumentException(call + ": lo is negative" + expected);
        if (hi > rows)
            throw new ArgumentException(call + ": hi is past the array's " + rows + " rows"
                    + expected);
        if (hi <= lo)
            throw new ArgumentException(call + ": the range of rows is empty, and a view has at "
                    + "least one row" + expected);
        long h = enter();
        try {
            return new DeviceArray(runtime, Native.arraySlice(h, lo, hi),
                    (firstRow < 0 ? 0 : firstRow) + lo);
        } finally {
            exit();
        }
    }

    /**
     * Views of consecutive rows that cover the array, of nearly equal rows: with {@code r} rows,
     * the first {@code r % n} views have {@code r / n + 1} rows and the others {@code r / n}, as
     * {@code numpy.array_split} cuts (10 rows in 3 views: 4, 3 and 3 rows). Each is a view as
     * {@link #slice(long, long)} makes, to close when done; kernels on different views have no
     * dependency between them and may run on different devices at once.
     *
     * @param n the number of views, 1 to {@code shape()[0]}
     * @return the views, first rows first, in an unmodifiable list
     * @throws ArgumentException if {@code n} is not in 1 to {@code shape()[0]}; the array is
     *         unchanged and stays usable
     * @throws StateException if the array is mapped by an open host view and a view would cut it
     *         anew (see {@link #slice(long, long)}); no view is left open
     * @throws IllegalStateException if the array or its runtime was closed
     */
    public List<DeviceArray> split(int n) {
        long rows = rows();
        if (n < 1 || n > rows)
            throw new ArgumentException("split(" + n + "): an array of " + rows + " rows splits "
                    + "into 1 to " + rows + " views of at least one row each");
        long[] counts = new long[n];
        for (int i = 0; i < n; i++)
            counts[i] = rows / n + (i < rows % n ? 1 : 0);
        return views(counts);
    }

    /**
     * Views of consecutive rows that cover the array, of the given numbers of rows: {@code
     * split(2, 5, 3)} of an array of 10 rows views rows 0 to 1, 2 to 6 and 7 to 9. Each is a view
     * as {@link #slice(long, long)} makes, to close when done. With one {@code int} argument,
     * {@link #split(int)} is called instead (a number of views); one {@code long} argument, as
     * in {@code split(10L)}, is a single row count.
     *
     * @param rows the number of rows of each view, each positive, adding up to {@code
     *        shape()[0]}
     * @return the views, first rows first, in an unmodifiable list
     * @throws ArgumentException if {@code rows} is null or empty, a count is not positive, or
     *         they do not add up to the array's rows; the array is unchanged and stays usable
     * @throws StateException if the array is mapped by an open host view and a view would cut it
     *         anew (see {@link #slice(long, long)}); no view is left open
     * @throws IllegalStateException if the array or its runtime was closed
     */
    public List<DeviceArray> split(long... rows) {
        if (rows == null)
            throw new ArgumentException("split(null): give the number of rows of each view");
        StringBuilder call = new StringBuilder("split(");
        for (int i = 0; i < rows.length && i < 8; i++)
            call.append(i > 0 ? ", " : "").append(rows[i]);
        call.append(rows.length > 8 ? ", ...)" : ")");
        long have = rows();
        long total = 0;
        boolean overflow = false;
        for (int i = 0; i < rows.length; i++) {
            if (rows[i] < 1)
                throw new ArgumentException(call + ": row count " + i + " is " + rows[i]
                        + "; each view needs a positive number of rows");
            overflow |= rows[i] > Long.MAX_VALUE - total;
            total += rows[i];
        }
        if (rows.length == 0)
            throw new ArgumentException(call + ": no row counts; give the rows of each view, "
                    + "adding up to the array's " + have + " rows");
        if (overflow || total != have)
            throw new ArgumentException(call + ": the row counts add up to "
                    + (overflow ? "more than " + Long.MAX_VALUE : Long.toString(total))
                    + "; the array has " + have + " rows");
        return views(rows.clone());
    }

    /**
     * The rank owning this array's rows, with several ranks ({@link Runtime#rank()}): a kernel
     * runs on the rank that owns what it writes.
     *
     * @return the owner, from 0; -1 when the rows of this view have several owners; 0
     *         single-process
     * @throws IllegalStateException if the array or its runtime was closed
     */
    public int owner() {
        long h = enter();
        try {
            return Native.arrayOwner(h);
        } finally {
            exit();
        }
    }

    /**
     * Make {@code rank} the owner of this array's rows (of a view: its rows only). Every rank
     * runs it, as every statement; no data moves: the next write there is the owner's, and a
     * read elsewhere fetches the current value.
     *
     * @param rank the new owner, 0 to {@code nranks() - 1}
     * @return this array
     * @throws ArgumentException if {@code rank} is not one of the run's ranks
     * @throws IllegalStateException if the array or its runtime was closed
     */
    public DeviceArray setOwner(int rank) {
        long h = enter();
        try {
            Native.arrayOwnerSet(h, rank);
        } finally {
            exit();
        }
        return this;
    }

    /**
     * Views of {@code counts[0]}, {@code counts[1]}, ... rows from row 0; none left on failure.
     * On several ranks they spread over the ranks in blocks (view {@code i} of {@code n} owned by
     * rank {@code i * nranks / n}).
     */
    private List<DeviceArray> views(long[] counts) {
        List<DeviceArray> out = new ArrayList<>(counts.length);
        try {
            long lo = 0;
            for (long c : counts) {
                out.add(slice(lo, lo + c));
                lo += c;
            }
            int nranks = runtime.nranks();
            for (int i = 0; nranks > 1 && i < out.size(); i++)
                out.get(i).setOwner(Native.rankBlockOwner(i, out.size(), nranks));
        } catch (RuntimeException | Error e) {
            for (DeviceArray v : out) {
                try {
                    v.close();
                } catch (RuntimeException f) {
                    e.addSuppressed(f);
                }
            }
            throw e;
        }
        return List.copyOf(out);
    }

    /* ------------------------------------------------------------ typed access */

    /**
     * How a Java primitive type reaches elements: the dtypes of its width (signed and unsigned
     * share the bits), its name in messages and its code for the native bulk copies. Each typed
     * accessor below is one line over {@code get}, {@code set} or {@code copy} with its Prim.
     */
    private enum Prim {
        BYTE("Byte", DType.INT8, DType.UINT8, Native.J_BYTE),
        SHORT("Short", DType.INT16, DType.UINT16, Native.J_SHORT),
        INT("Int", DType.INT32, DType.UINT32, Native.J_INT),
        LONG("Long", DType.INT64, DType.UINT64, Native.J_LONG),
        FLOAT("Float", DType.FLOAT32, DType.FLOAT32, Native.J_FLOAT),
        DOUBLE("Double", DType.FLOAT64, DType.FLOAT64, Native.J_DOUBLE);

        final String title;
        final DType a;
        final DType b;
        final int code;

        Prim(String title, DType a, DType b, int code) {
            this.title = title;
            this.a = a;
            this.b = b;
            this.code = code;
        }

        /** The accessor's name in messages: getFloat, copyTo(float[]), ... */
        String accessor(String verb) {
            return verb.startsWith("copy")
                    ? verb + "(" + title.toLowerCase(java.util.Locale.ROOT) + "[])"
                    : verb + title;
        }
    }

    private void check(Prim p, String verb) {
        if (dtype != p.a && dtype != p.b)
            throw new ArgumentException(p.accessor(verb) + " needs an array of " + p.a
                    + (p.b != p.a ? " or " + p.b : "") + "; this array holds " + dtype);
    }

    private void checkIndex(long i) {
        if (i < 0 || i >= length)
            throw new IndexOutOfBoundsException(
                    "index " + i + " is out of range for an array of " + length + " elements");
    }

    /** Elements {@code first..first+count-1} must lie in the array. */
    private void checkElements(long first, long count) {
        if (first < 0 || first > length - count)
            throw new IndexOutOfBoundsException("elements [" + first + ", " + (first + count)
                    + ") are outside the array of " + length + " elements");
    }

    /** Element i's bits, zero-extended. */
    private long get(Prim p, long i) {
        check(p, "get");
        checkIndex(i);
        long h = enter();
        try {
            return Native.arrayGet(h, i, dtype.size());
        } finally {
            exit();
        }
    }

    /** Writes the low bytes of {@code bits} (the element's width) to element i. */
    private void set(Prim p, long i, long bits) {
        check(p, "set");
        checkIndex(i);
        long h = enter();
        try {
            Native.arraySet(h, i, dtype.size(), bits);
        } finally {
            exit();
        }
    }

    /** Copies between elements {@code first..} and a Java array of p's type, either way. */
    private void copy(Prim p, boolean fromJava, long first, Object javaArray, int offset,
            int count, int javaLength) {
        check(p, fromJava ? "copyFrom" : "copyTo");
        if (offset < 0 || count < 0 || offset > javaLength - count)
            throw new IndexOutOfBoundsException("Java array range [" + offset + ", "
                    + ((long) offset + count) + ") is outside its " + javaLength + " elements");
        checkElements(first, count);
        long h = enter();
        try {
            if (fromJava)
                Native.arrayWriteArray(h, first, count, javaArray, offset, p.code);
            else
                Native.arrayReadArray(h, first, count, javaArray, offset, p.code);
        } finally {
            exit();
        }
    }

    /**
     * Reads one element of a {@code float32} array; waits for its last writer.
     *
     * @param i flat index
     * @return the value
     * @throws ArgumentException if the array is not float32
     * @throws IndexOutOfBoundsException if {@code i} is outside the array
     */
    public float getFloat(long i) {
        return Float.intBitsToFloat((int) get(Prim.FLOAT, i));
    }

    /**
     * Writes one element of a {@code float32} array; waits for its last writer and readers.
     *
     * @param i flat index
     * @param v the value
     * @throws ArgumentException if the array is not float32
     * @throws IndexOutOfBoundsException if {@code i} is outside the array
     */
    public void setFloat(long i, float v) {
        set(Prim.FLOAT, i, Float.floatToRawIntBits(v));
    }

    /**
     * Reads one element of a {@code float64} array.
     *
     * @param i flat index
     * @return the value
     * @throws ArgumentException if the array is not float64
     * @throws IndexOutOfBoundsException if {@code i} is outside the array
     */
    public double getDouble(long i) {
        return Double.longBitsToDouble(get(Prim.DOUBLE, i));
    }

    /**
     * Writes one element of a {@code float64} array.
     *
     * @param i flat index
     * @param v the value
     * @throws ArgumentException if the array is not float64
     * @throws IndexOutOfBoundsException if {@code i} is outside the array
     */
    public void setDouble(long i, double v) {
        set(Prim.DOUBLE, i, Double.doubleToRawLongBits(v));
    }

    /**
     * Reads one element of an {@code int32} or {@code uint32} array (the bits of a uint32; see
     * {@link Integer#toUnsignedLong(int)}).
     *
     * @param i flat index
     * @return the value
     * @throws ArgumentException if the array is not int32 or uint32
     * @throws IndexOutOfBoundsException if {@code i} is outside the array
     */
    public int getInt(long i) {
        return (int) get(Prim.INT, i);
    }

    /**
     * Writes one element of an {@code int32} or {@code uint32} array.
     *
     * @param i flat index
     * @param v the value (its bits, for uint32)
     * @throws ArgumentException if the array is not int32 or uint32
     * @throws IndexOutOfBoundsException if {@code i} is outside the array
     */
    public void setInt(long i, int v) {
        set(Prim.INT, i, v);
    }

    /**
     * Reads one element of an {@code int64} or {@code uint64} array.
     *
     * @param i flat index
     * @return the value (the bits, for uint64)
     * @throws ArgumentException if the array is not int64 or uint64
     * @throws IndexOutOfBoundsException if {@code i} is outside the array
     */
    public long getLong(long i) {
        return get(Prim.LONG, i);
    }

    /**
     * Writes one element of an {@code int64} or {@code uint64} array.
     *
     * @param i flat index
     * @param v the value (its bits, for uint64)
     * @throws ArgumentException if the array is not int64 or uint64
     * @throws IndexOutOfBoundsException if {@code i} is outside the array
     */
    public void setLong(long i, long v) {
        set(Prim.LONG, i, v);
    }

    /**
     * Reads one element of an {@code int16} or {@code uint16} array.
     *
     * @param i flat index
     * @return the value (the bits, for uint16)
     * @throws ArgumentException if the array is not int16 or uint16
     * @throws IndexOutOfBoundsException if {@code i} is outside the array
     */
    public short getShort(long i) {
        return (short) get(Prim.SHORT, i);
    }

    /**
     * Writes one element of an {@code int16} or {@code uint16} array.
     *
     * @param i flat index
     * @param v the value (its bits, for uint16)
     * @throws ArgumentException if the array is not int16 or uint16
     * @throws IndexOutOfBoundsException if {@code i} is outside the array
     */
    public void setShort(long i, short v) {
        set(Prim.SHORT, i, v);
    }

    /**
     * Reads one element of an {@code int8} or {@code uint8} array.
     *
     * @param i flat index
     * @return the value (the bits, for uint8)
     * @throws ArgumentException if the array is not int8 or uint8
     * @throws IndexOutOfBoundsException if {@code i} is outside the array
     */
    public byte getByte(long i) {
        return (byte) get(Prim.BYTE, i);
    }

    /**
     * Writes one element of an {@code int8} or {@code uint8} array.
     *
     * @param i flat index
     * @param v the value (its bits, for uint8)
     * @throws ArgumentException if the array is not int8 or uint8
     * @throws IndexOutOfBoundsException if {@code i} is outside the array
     */
    public void setByte(long i, byte v) {
        set(Prim.BYTE, i, v);
    }

    /* ------------------------------------------------------------ bulk copies */

    /**
     * Copies {@code src} into the first {@code src.length} elements of a {@code float32} array:
     * one host access (writing the whole array needs no copy of the old contents).
     *
     * @param src the values
     * @throws ArgumentException if the array is not float32
     * @throws IndexOutOfBoundsException if {@code src} is longer than the array
     */
    public void copyFrom(float[] src) {
        copyFrom(0, src, 0, src.length);
    }

    /**
     * Copies {@code count} values from {@code src[offset..]} to elements {@code first..} of a
     * {@code float32} array, as one host access.
     *
     * @param first first element written
     * @param src the values
     * @param offset first index in {@code src}
     * @param count number of elements
     * @throws ArgumentException if the array is not float32
     * @throws IndexOutOfBoundsException if a range is outside its array
     */
    public void copyFrom(long first, float[] src, int offset, int count) {
        copy(Prim.FLOAT, true, first, src, offset, count, src.length);
    }

    /**
     * Copies the first {@code dst.length} elements of a {@code float32} array into {@code dst}:
     * one host access that waits only for the array's last writer.
     *
     * @param dst receives the values
     * @throws ArgumentException if the array is not float32
     * @throws IndexOutOfBoundsException if {@code dst} is longer than the array
     */
    public void copyTo(float[] dst) {
        copyTo(0, dst, 0, dst.length);
    }

    /**
     * Copies elements {@code first..first+count-1} of a {@code float32} array into {@code
     * dst[offset..]}, as one host access.
     *
     * @param first first element read
     * @param dst receives the values
     * @param offset first index in {@code dst}
     * @param count number of elements
     * @throws ArgumentException if the array is not float32
     * @throws IndexOutOfBoundsException if a range is outside its array
     */
    public void copyTo(long first, float[] dst, int offset, int count) {
        copy(Prim.FLOAT, false, first, dst, offset, count, dst.length);
    }

    /**
     * Copies {@code src} into the first elements of a {@code float64} array (one host access).
     *
     * @param src the values
     * @throws ArgumentException if the array is not float64
     * @throws IndexOutOfBoundsException if {@code src} is longer than the array
     */
    public void copyFrom(double[] src) {
        copyFrom(0, src, 0, src.length);
    }

    /**
     * Copies {@code count} values from {@code src[offset..]} to elements {@code first..} of a
     * {@code float64} array (one host access).
     *
     * @param first first element written
     * @param src the values
     * @param offset first index in {@code src}
     * @param count number of elements
     * @throws ArgumentException if the array is not float64
     * @throws IndexOutOfBoundsException if a range is outside its array
     */
    public void copyFrom(long first, double[] src, int offset, int count) {
        copy(Prim.DOUBLE, true, first, src, offset, count, src.length);
    }

    /**
     * Copies the first {@code dst.length} elements of a {@code float64} array into {@code dst}
     * (one host access).
     *
     * @param dst receives the values
     * @throws ArgumentException if the array is not float64
     * @throws IndexOutOfBoundsException if {@code dst} is longer than the array
     */
    public void copyTo(double[] dst) {
        copyTo(0, dst, 0, dst.length);
    }

    /**
     * Copies elements {@code first..} of a {@code float64} array into {@code dst[offset..]} (one
     * host access).
     *
     * @param first first element read
     * @param dst receives the values
     * @param offset first index in {@code dst}
     * @param count number of elements
     * @throws ArgumentException if the array is not float64
     * @throws IndexOutOfBoundsException if a range is outside its array
     */
    public void copyTo(long first, double[] dst, int offset, int count) {
        copy(Prim.DOUBLE, false, first, dst, offset, count, dst.length);
    }

    /**
     * Copies {@code src} into the first elements of an {@code int32}/{@code uint32} array (one
     * host access).
     *
     * @param src the values
     * @throws ArgumentException if the array is not int32 or uint32
     * @throws IndexOutOfBoundsException if {@code src} is longer than the array
     */
    public void copyFrom(int[] src) {
        copyFrom(0, src, 0, src.length);
    }

    /**
     * Copies {@code count} values from {@code src[offset..]} to elements {@code first..} of an
     * {@code int32}/{@code uint32} array (one host access).
     *
     * @param first first element written
     * @param src the values
     * @param offset first index in {@code src}
     * @param count number of elements
     * @throws ArgumentException if the array is not int32 or uint32
     * @throws IndexOutOfBoundsException if a range is outside its array
     */
    public void copyFrom(long first, int[] src, int offset, int count) {
        copy(Prim.INT, true, first, src, offset, count, src.length);
    }

    /**
     * Copies the first {@code dst.length} elements of an {@code int32}/{@code uint32} array into
     * {@code dst} (one host access).
     *
     * @param dst receives the values
     * @throws ArgumentException if the array is not int32 or uint32
     * @throws IndexOutOfBoundsException if {@code dst} is longer than the array
     */
    public void copyTo(int[] dst) {
        copyTo(0, dst, 0, dst.length);
    }

    /**
     * Copies elements {@code first..} of an {@code int32}/{@code uint32} array into {@code
     * dst[offset..]} (one host access).
     *
     * @param first first element read
     * @param dst receives the values
     * @param offset first index in {@code dst}
     * @param count number of elements
     * @throws ArgumentException if the array is not int32 or uint32
     * @throws IndexOutOfBoundsException if a range is outside its array
     */
    public void copyTo(long first, int[] dst, int offset, int count) {
        copy(Prim.INT, false, first, dst, offset, count, dst.length);
    }

    /**
     * Copies {@code src} into the first elements of an {@code int64}/{@code uint64} array (one
     * host access).
     *
     * @param src the values
     * @throws ArgumentException if the array is not int64 or uint64
     * @throws IndexOutOfBoundsException if {@code src} is longer than the array
     */
    public void copyFrom(long[] src) {
        copyFrom(0, src, 0, src.length);
    }

    /**
     * Copies {@code count} values from {@code src[offset..]} to elements {@code first..} of an
     * {@code int64}/{@code uint64} array (one host access).
     *
     * @param first first element written
     * @param src the values
     * @param offset first index in {@code src}
     * @param count number of elements
     * @throws ArgumentException if the array is not int64 or uint64
     * @throws IndexOutOfBoundsException if a range is outside its array
     */
    public void copyFrom(long first, long[] src, int offset, int count) {
        copy(Prim.LONG, true, first, src, offset, count, src.length);
    }

    /**
     * Copies the first {@code dst.length} elements of an {@code int64}/{@code uint64} array into
     * {@code dst} (one host access).
     *
     * @param dst receives the values
     * @throws ArgumentException if the array is not int64 or uint64
     * @throws IndexOutOfBoundsException if {@code dst} is longer than the array
     */
    public void copyTo(long[] dst) {
        copyTo(0, dst, 0, dst.length);
    }

    /**
     * Copies elements {@code first..} of an {@code int64}/{@code uint64} array into {@code
     * dst[offset..]} (one host access).
     *
     * @param first first element read
     * @param dst receives the values
     * @param offset first index in {@code dst}
     * @param count number of elements
     * @throws ArgumentException if the array is not int64 or uint64
     * @throws IndexOutOfBoundsException if a range is outside its array
     */
    public void copyTo(long first, long[] dst, int offset, int count) {
        copy(Prim.LONG, false, first, dst, offset, count, dst.length);
    }

    /**
     * Copies {@code src} into the first elements of an {@code int16}/{@code uint16} array (one
     * host access).
     *
     * @param src the values
     * @throws ArgumentException if the array is not int16 or uint16
     * @throws IndexOutOfBoundsException if {@code src} is longer than the array
     */
    public void copyFrom(short[] src) {
        copyFrom(0, src, 0, src.length);
    }

    /**
     * Copies {@code count} values from {@code src[offset..]} to elements {@code first..} of an
     * {@code int16}/{@code uint16} array (one host access).
     *
     * @param first first element written
     * @param src the values
     * @param offset first index in {@code src}
     * @param count number of elements
     * @throws ArgumentException if the array is not int16 or uint16
     * @throws IndexOutOfBoundsException if a range is outside its array
     */
    public void copyFrom(long first, short[] src, int offset, int count) {
        copy(Prim.SHORT, true, first, src, offset, count, src.length);
    }

    /**
     * Copies the first {@code dst.length} elements of an {@code int16}/{@code uint16} array into
     * {@code dst} (one host access).
     *
     * @param dst receives the values
     * @throws ArgumentException if the array is not int16 or uint16
     * @throws IndexOutOfBoundsException if {@code dst} is longer than the array
     */
    public void copyTo(short[] dst) {
        copyTo(0, dst, 0, dst.length);
    }

    /**
     * Copies elements {@code first..} of an {@code int16}/{@code uint16} array into {@code
     * dst[offset..]} (one host access).
     *
     * @param first first element read
     * @param dst receives the values
     * @param offset first index in {@code dst}
     * @param count number of elements
     * @throws ArgumentException if the array is not int16 or uint16
     * @throws IndexOutOfBoundsException if a range is outside its array
     */
    public void copyTo(long first, short[] dst, int offset, int count) {
        copy(Prim.SHORT, false, first, dst, offset, count, dst.length);
    }

    /**
     * Copies {@code src} into the first elements of an {@code int8}/{@code uint8} array (one host
     * access).
     *
     * @param src the values
     * @throws ArgumentException if the array is not int8 or uint8
     * @throws IndexOutOfBoundsException if {@code src} is longer than the array
     */
    public void copyFrom(byte[] src) {
        copyFrom(0, src, 0, src.length);
    }

    /**
     * Copies {@code count} values from {@code src[offset..]} to elements {@code first..} of an
     * {@code int8}/{@code uint8} array (one host access).
     *
     * @param first first element written
     * @param src the values
     * @param offset first index in {@code src}
     * @param count number of elements
     * @throws ArgumentException if the array is not int8 or uint8
     * @throws IndexOutOfBoundsException if a range is outside its array
     */
    public void copyFrom(long first, byte[] src, int offset, int count) {
        copy(Prim.BYTE, true, first, src, offset, count, src.length);
    }

    /**
     * Copies the first {@code dst.length} elements of an {@code int8}/{@code uint8} array into
     * {@code dst} (one host access).
     *
     * @param dst receives the values
     * @throws ArgumentException if the array is not int8 or uint8
     * @throws IndexOutOfBoundsException if {@code dst} is longer than the array
     */
    public void copyTo(byte[] dst) {
        copyTo(0, dst, 0, dst.length);
    }

    /**
     * Copies elements {@code first..} of an {@code int8}/{@code uint8} array into {@code
     * dst[offset..]} (one host access).
     *
     * @param first first element read
     * @param dst receives the values
     * @param offset first index in {@code dst}
     * @param count number of elements
     * @throws ArgumentException if the array is not int8 or uint8
     * @throws IndexOutOfBoundsException if a range is outside its array
     */
    public void copyTo(long first, byte[] dst, int offset, int count) {
        copy(Prim.BYTE, false, first, dst, offset, count, dst.length);
    }

    /**
     * Copies between elements {@code first..} and a direct buffer's remaining bytes, which must
     * be whole elements, either way; advances the buffer's position.
     */
    private void copyBuffer(boolean fromJava, long first, ByteBuffer b) {
        String what = fromJava ? "copyFrom(ByteBuffer)" : "copyTo(ByteBuffer)";
        if (b == null)
            throw new ArgumentException(what + ": the buffer must not be null");
        if (!b.isDirect())
            throw new ArgumentException(what + ": the buffer must be direct "
                    + "(ByteBuffer.allocateDirect); for heap memory use a primitive array");
        if (b.remaining() % dtype.size() != 0)
            throw new ArgumentException(what + ": " + b.remaining() + " remaining bytes are not a "
                    + "whole number of " + dtype + " elements (" + dtype.size() + " bytes each)");
        if (!fromJava && b.isReadOnly())
            throw new ArgumentException(what + ": the buffer is read-only");
        long count = b.remaining() / dtype.size();
        checkElements(first, count);
        long h = enter();
        try {
            if (fromJava)
                Native.arrayWriteBuffer(h, first, count, b, b.position());
            else
                Native.arrayReadBuffer(h, first, count, b, b.position());
        } finally {
            exit();
        }
        b.position(b.limit());
    }

    /**
     * Copies the buffer's remaining bytes into elements {@code first..} of the array as raw
     * element bytes (native byte order), as one host access, and advances its position. Any
     * element type.
     *
     * @param first first element written
     * @param src a direct buffer holding whole elements
     * @throws ArgumentException if the buffer is not direct or not whole elements
     * @throws IndexOutOfBoundsException if the elements are outside the array
     */
    public void copyFrom(long first, ByteBuffer src) {
        copyBuffer(true, first, src);
    }

    /**
     * Copies the buffer's remaining bytes into the first elements of the array; see {@link
     * #copyFrom(long, ByteBuffer)}.
     *
     * @param src a direct buffer holding whole elements
     */
    public void copyFrom(ByteBuffer src) {
        copyFrom(0, src);
    }

    /**
     * Fills the buffer's remaining bytes with elements {@code first..} of the array, as raw
     * element bytes (native byte order), as one host access, and advances its position. Any
     * element type.
     *
     * @param first first element read
     * @param dst a direct buffer whose remaining bytes are whole elements
     * @throws ArgumentException if the buffer is not direct, read-only or not whole elements
     * @throws IndexOutOfBoundsException if the elements are outside the array
     */
    public void copyTo(long first, ByteBuffer dst) {
        copyBuffer(false, first, dst);
    }

    /**
     * Fills the buffer's remaining bytes with the first elements of the array; see {@link
     * #copyTo(long, ByteBuffer)}.
     *
     * @param dst a direct buffer whose remaining bytes are whole elements
     */
    public void copyTo(ByteBuffer dst) {
        copyTo(0, dst);
    }

    /* ------------------------------------------------------------ host views */

    /**
     * A zero-copy, read-write host view of the whole array; see {@link #asByteBuffer(Access)}.
     *
     * @return a direct buffer in native byte order
     */
    public ByteBuffer asByteBuffer() {
        return asByteBuffer(Access.INOUT);
    }

    /**
     * A zero-copy host view of the whole array: a direct buffer over the array's host memory, in
     * native byte order. Taking it is a host access that lasts until {@link #release()}: it waits
     * for the last writer ({@link Access#IN}) or also for readers ({@link Access#OUT}, {@link
     * Access#INOUT}, which make the host copy the only valid one), and kernels that conflict
     * with it are held back, not failed, until it is released. Views nest; each needs its own
     * release.
     *
     * <p><b>Lifetime.</b> The buffer is coordinated with kernels only until its release (or the
     * close of the array or runtime, which release open views). Using it later is a mistake
     * whose writes may be lost or overwritten, but it is never a crash: like the mapping behind a
     * {@code MappedByteBuffer}, the memory stays allocated until the buffer, and every buffer
     * derived from it ({@code slice}, {@code asFloatBuffer}, ...), has been garbage-collected.
     * So {@link #close()} of the array, or of its runtime, frees the native memory only once
     * those buffers are unreachable; drop them (or let them go out of scope) to give the memory
     * back promptly.
     *
     * @param access how the view is used; {@code IN} gives a read-only buffer
     * @return the view
     * @throws ArgumentException if the array is over 2 GiB, the most a ByteBuffer addresses
     * @throws IllegalStateException if the array or its runtime was closed, also by another
     *         thread while this call waited for the array
     */
    public ByteBuffer asByteBuffer(Access access) {
        if (access == null)
            throw new ArgumentException("access must not be null");
        if (nbytes() > Integer.MAX_VALUE)
            throw new ArgumentException("the array has " + nbytes() + " bytes; a ByteBuffer views "
                    + "at most 2^31-1: use copyTo/copyFrom with an element range");
        ByteBuffer b;
        long h = enter();
        try {
            /* Pinned before the map, so that a close meanwhile keeps the memory. */
            state.pin();
            try {
                b = Native.arrayMap(h, access.code(), nbytes());
            } catch (RuntimeException | Error e) {
                state.unpin();
                throw e;
            }
            if (!state.mapped()) {
                try {
                    Native.arrayUnmap(h);
                } finally {
                    state.unpin();
                }
                throw new IllegalStateException(
                        "polygpu: the array was closed while asByteBuffer waited for it");
            }
            /* Derived buffers reference this one, so it is collected after all of them. */
            Native.CLEANER.register(b, state::unpin);
        } finally {
            exit();
        }
        b.order(ByteOrder.nativeOrder());
        return access == Access.IN ? b.asReadOnlyBuffer().order(ByteOrder.nativeOrder()) : b;
    }

    /**
     * Ends the most recent host view taken with {@link #asByteBuffer()}: kernels held back by it
     * may run. The buffer stays valid memory (see {@link #asByteBuffer(Access)}) but no longer
     * shows the array's current value reliably.
     *
     * @throws StateException if no view is open
     * @throws IllegalStateException if the array or its runtime was closed (which released its
     *         views)
     */
    public void release() {
        enter();
        try {
            state.unmap();
        } finally {
            exit();
        }
    }

    /**
     * Whether {@link #close()} has run on this array or its runtime.
     *
     * @return true once closed
     */
    public boolean isClosed() {
        return state.closed.get() || state.rt.closed();
    }

    /**
     * Closes the array: every later call on it throws {@link IllegalStateException}, and open
     * host views are released. The native array is freed now, or, while buffers from {@link
     * #asByteBuffer} are still reachable, once they have been collected. Work that still uses
     * the array keeps its memory until it ends, and so do views of its rows ({@link #slice})
     * that are still open: they stay usable. Closing again does nothing.
     */
    @Override
    public void close() {
        cleanable.clean();
    }

    /**
     * Describes the array, and for a view the rows it views.
     *
     * @return e.g. {@code "DeviceArray(float32, [1000])"}, or for {@code slice(500, 1000)} of
     *         it {@code "DeviceArray(float32, [500], rows [500, 1000) of array 1)"}
     */
    @Override
    public String toString() {
        String s = "DeviceArray(" + dtype + ", " + java.util.Arrays.toString(shape);
        if (firstRow >= 0)
            s += ", rows [" + firstRow + ", " + (firstRow + shape[0]) + ") of array " + id;
        return s + ")";
    }
}
