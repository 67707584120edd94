package polygpu;

import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Host views used after the memory they show was given back: each scenario would kill the JVM
 * if a buffer from asByteBuffer pointed at freed memory, so {@link HostViewLifetimeTest} runs
 * them in a child JVM. Prints "ok NAME" after each scenario and "done" at the end; exits
 * non-zero on a failed check. Arguments, if any, name the scenarios to run.
 */
final class ViewMisuse {
    private ViewMisuse() {
    }

    /** 64 MiB of float32: above glibc's largest mmap threshold, so freeing it unmaps it. */
    static final int N = 1 << 24;

    /** Writes one byte per page of the whole buffer, after checking the value at 0 survived. */
    static void touch(ByteBuffer b, float first) {
        check(b.getFloat(0) == first, "the view kept its contents: " + b.getFloat(0));
        for (int i = 0; i < b.capacity(); i += 4096)
            b.put(i, (byte) 1);
    }

    static void check(boolean ok, String what) {
        if (!ok)
            throw new AssertionError(what);
    }

    static void gc() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(20);
        }
    }

    record Scenario(String name, Body body) {
    }

    interface Body {
        void run() throws Exception;
    }

    static final List<Scenario> ALL = new ArrayList<>();

    static void scenario(String name, Body body) {
        ALL.add(new Scenario(name, body));
    }

    static {
        scenario("runtime closed under an open view", () -> {
            Runtime rt = TestSupport.runtime(null);
            DeviceArray a = rt.array("float32", N);
            ByteBuffer b = a.asByteBuffer();
            b.putFloat(0, 7f);
            rt.close();
            touch(b, 7f);
        });
        scenario("array closed under an open view", () -> {
            try (Runtime rt = TestSupport.runtime(null)) {
                DeviceArray a = rt.array("float32", N);
                ByteBuffer b = a.asByteBuffer();
                b.putFloat(0, 7f);
                a.close();
                touch(b, 7f);
                rt.array("float32", N).setFloat(0, 1f); /* the runtime goes on */
            }
        });
        scenario("view released, then the array closed", () -> {
            try (Runtime rt = TestSupport.runtime(null)) {
                DeviceArray a = rt.array("float32", N);
                ByteBuffer b = a.asByteBuffer();
                b.putFloat(0, 7f);
                a.release();
                a.close();
                touch(b, 7f);
            }
        });
        scenario("view released, then the runtime closed", () -> {
            Runtime rt = TestSupport.runtime(null);
            DeviceArray a = rt.array("float32", N);
            ByteBuffer b = a.asByteBuffer();
            b.putFloat(0, 7f);
            a.release();
            rt.close();
            touch(b, 7f);
        });
        scenario("read-only view after the runtime closed", () -> {
            Runtime rt = TestSupport.runtime(null);
            DeviceArray a = rt.array("float32", N);
            a.setFloat(0, 5f);
            ByteBuffer b = a.asByteBuffer(Access.IN);
            rt.close();
            check(b.getFloat(0) == 5f, "read-only view kept its contents");
            long sum = 0;
            for (int i = 0; i < b.capacity(); i += 4096)
                sum += b.get(i);
            check(sum == 0, "the rest is zeros");
        });
        scenario("derived buffer outlives its dropped root", () -> {
            Runtime rt = TestSupport.runtime(null);
            DeviceArray a = rt.array("float32", N);
            FloatBuffer f = a.asByteBuffer().asFloatBuffer(); /* the root is garbage now */
            f.put(0, 3f);
            gc();
            a.close();
            rt.close();
            gc();
            check(f.get(0) == 3f, "derived view kept its contents");
            for (int i = 0; i < f.capacity(); i += 1024)
                f.put(i, 1f);
        });
        scenario("what close kept is freed once the buffers are collected", () -> {
            Runtime rt = TestSupport.runtime(null);
            DeviceArray a = rt.array("float32", N), b = rt.array("float32", N);
            ByteBuffer view = a.asByteBuffer();
            view.putFloat(0, 4f);
            a.release();
            rt.close();
            Runtime.State rs = rt.state;
            check(!nativeFreed(rs) && !a.state.freed(), "a buffer pins the array and runtime");
            check(b.state.freed(), "an array no buffer shows is freed at close");
            touch(view, 4f);
            view = null;
            for (int i = 0; i < 500 && !nativeFreed(rs); i++)
                gc();
            check(nativeFreed(rs), "the runtime was freed after its last buffer was collected");
        });
        scenario("array and runtime dropped, not closed", () -> {
            ByteBuffer b = dropped();
            gc();
            touch(b, 9f);
        });
    }

    static boolean nativeFreed(Runtime.State rs) {
        rs.lock.readLock().lock();
        try {
            return rs.freed();
        } finally {
            rs.lock.readLock().unlock();
        }
    }

    /** A view whose array and runtime become unreachable on return. */
    static ByteBuffer dropped() {
        Runtime rt = TestSupport.runtime(null);
        ByteBuffer b = rt.array("float32", N).asByteBuffer();
        b.putFloat(0, 9f);
        return b;
    }

    public static void main(String[] args) throws Exception {
        for (Scenario s : ALL) {
            if (args.length > 0 && !List.of(args).contains(s.name()))
                continue; /* names given: only those */
            System.out.println("start " + s.name());
            System.out.flush();
            s.body().run();
            System.out.println("ok " + s.name());
            System.out.flush();
        }
        System.out.println("done");
    }
}
