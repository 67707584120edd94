package polygpu;

import java.lang.ref.Cleaner;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The JNI entry points (native/jni_*.c) and what every handle class shares. Handles are the C
 * pointers as longs; strings travel as NUL-terminated UTF-8 byte arrays so that any Java string
 * reaches C unchanged. Every native method throws the mapped {@link PolygpuException} when the C
 * call fails.
 */
final class Native {
    static {
        NativeLoader.load();
    }

    /** Frees handles the program dropped without closing them. */
    static final Cleaner CLEANER = Cleaner.create();

    /** Java primitive array kinds for the bulk copies. */
    static final int J_BYTE = 0, J_SHORT = 1, J_INT = 2, J_LONG = 3, J_FLOAT = 4, J_DOUBLE = 5;

    /** Kernel argument kinds, see native/jni_kernel.c. */
    static final int ARG_ARRAY = 0, ARG_INT = 1, ARG_FLOAT = 2, ARG_DOUBLE = 3;

    /** Locations in pg_stats.link_bytes per dimension (PG_MAX_DEVICES + 1). */
    static final int MAX_LOCATIONS = maxLocations();

    private Native() {
    }

    /** {@code s} as NUL-terminated UTF-8; null stays null. */
    static byte[] cstr(String s, String what) {
        if (s == null)
            return null;
        if (s.indexOf('\0') >= 0)
            throw new ArgumentException(what + " contains a NUL character, which C cannot carry");
        byte[] u = s.getBytes(StandardCharsets.UTF_8);
        byte[] z = new byte[u.length + 1];
        System.arraycopy(u, 0, z, 0, u.length);
        return z;
    }

    static native int maxLocations();

    static native int dtypeParse(byte[] name);

    static native long runtimeNew(byte[][] names, byte[][] values);

    static native void runtimeFree(long rt);

    static native void runtimeSync(long rt);

    static native void runtimeSyncTimeout(long rt, long timeoutNs);

    static native long[] runtimeStats(long rt);

    /**
     * {limit W, used W, from models (1/0), ndevices, nchosen, MAX_LOCATIONS - 1 chosen ids,
     * as many watts, as many performances}.
     */
    static native double[] runtimePowerChoice(long rt);
    /** {rank, nranks} (option ranks). */
    static native int[] runtimeRanks(long rt);

    static native int rankBlockOwner(int i, int n, int nranks);

    static native boolean ranksActive();

    static native void ranksAbort(int code, byte[] why);

    static native long runtimeClock(long rt);

    /**
     * {long[] (id, kind, memory, major, minor, multiprocessors, max threads per block, max block
     * x y z, max grid x y z, max shared memory per block) per device, String[] names}.
     */
    static native Object[] runtimeDevices(long rt);

    /**
     * {long[] (bytes, median ns, samples) per model, String[] kernels, String[] device classes}.
     */
    static native Object[] runtimeModels(long rt);

    /**
     * {long[] 11 per vertex (id, kind, device, stream, nargs, submit, start, end, bytes, src,
     * dst), String[] names, long[] (array, access) per argument, long[] (from, to) per edge}.
     */
    static native Object[] dagSnapshot(long rt);

    static native String dagString(long rt, int format);

    static native String nodeStatus();

    static native void dagExport(long rt, int format, byte[] path);

    static native void traceWrite(long rt, byte[] path);

    static native long arrayNew(long rt, int dtype, long[] shape);

    static native void arrayFree(long a);

    /** A view of rows {@code [lo, hi)} of {@code a}: a new handle, freed with arrayFree. */
    static native long arraySlice(long a, long lo, long hi);

    /** {id, dtype, ndim, shape[0..3], size, nbytes, valid}. */
    static native long[] arrayDescribe(long a);

    /** The raw bits of element {@code index} of {@code esize} bytes, zero-extended. */
    static native long arrayGet(long a, long index, int esize);

    static native void arraySet(long a, long index, int esize, long bits);

    static native void arrayReadArray(long a, long first, int count, Object dst, int offset,
            int jtype);

    static native void arrayWriteArray(long a, long first, int count, Object src, int offset,
            int jtype);

    static native void arrayReadBuffer(long a, long first, long count, ByteBuffer dst,
            long byteOffset);

    static native void arrayWriteBuffer(long a, long first, long count, ByteBuffer src,
            long byteOffset);

    static native ByteBuffer arrayMap(long a, int access, long nbytes);

    static native void arrayUnmap(long a);

    static native void arrayPrefetch(long a, int location);

    static native void arrayOwnerSet(long a, int owner);

    static native int arrayOwner(long a);

    static native long kernelNew(long rt, byte[] source, byte[] name, byte[] signature,
            byte[] options, byte[] where);

    /** A built-in task (pg_task_builtin) as a kernel handle, freed with kernelFree. */
    static native long taskBuiltin(long rt, byte[] name);

    static native void kernelFree(long k);

    static native void kernelSplit(long k, byte[] mode);

    /** The tiled GEMM (pg_linalg_gemm); the report's layout is in jni_linalg.c. */
    static native double[] linalgGemm(long rt, long a, long b, long c, double alpha, double beta,
            boolean transA, boolean transB, int devices, long tile, int metric);

    static native void graphBegin(long rt);

    static native long graphEnd(long rt);

    static native void graphLaunch(long g);

    static native long graphCalls(long g);

    static native void graphFree(long g);

    static native void kernelLaunch(long k, int gx, int gy, int gz, int bx, int by, int bz,
            long sharedMem, int[] kinds, long[] values);
}
