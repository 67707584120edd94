package polygpu;

import java.lang.ref.Cleaner;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Kernel launches recorded once and replayed many times, from {@link Runtime#record(Runnable)}.
 *
 * <pre>{@code
 * try (Graph g = rt.record(() -> {
 *         k.launch(grid, block, y, x, n);   // recorded: nothing runs
 *     })) {
 *     for (int i = 0; i < 100; i++)
 *         g.launch();                       // each replay = the same launches made now
 * }
 * }</pre>
 *
 * <p>Each replay issues the recorded launches again, in order, with the same arrays and
 * argument values, as if they were made at that moment: dependencies on work before and after
 * and coherence are those of the eager launches. Arguments are bound once, at recording. The
 * first replay makes the launches and keeps what they did (devices, streams, copies) as the
 * graph's plan; later replays that find the arrays where the plan reads them issue the plan as
 * one operation (on GPUs one CUDA graph), shown in the DAG as one kernel vertex named
 * "graph replay (N calls)". Inside the recording, on the recording thread, a host
 * access to the runtime's arrays, {@link Runtime#sync()} and any call on another runtime throw
 * {@link StateException}, as does closing an array the recording uses; a replay after such an
 * array was closed throws {@link StateException} naming it. {@link #close()} frees the graph; a
 * graph the program drops is freed by a {@link Cleaner}; the runtime's close frees it too.
 */
public final class Graph implements AutoCloseable {

    /** The native graph; no reference to the Graph object, as the Cleaner requires. */
    static final class State implements Runnable {
        final Runtime.State rt;
        final long handle;
        final AtomicBoolean closed = new AtomicBoolean();

        State(Runtime.State rt, long handle) {
            this.rt = rt;
            this.handle = handle;
        }

        @Override
        public void run() {
            rt.lock.readLock().lock();
            try {
                if (closed.getAndSet(true) || rt.closed())
                    return; /* a closed runtime freed its graphs itself */
                Native.graphFree(handle);
            } finally {
                rt.lock.readLock().unlock();
            }
        }
    }

    /** Keeps the runtime reachable (and so open) while this graph is. */
    private final Runtime runtime;
    private final State state;
    private final Cleaner.Cleanable cleanable;

    Graph(Runtime runtime, long handle) {
        this.runtime = runtime;
        this.state = new State(runtime.state, handle);
        this.cleanable = Native.CLEANER.register(this, state);
    }

    private long handle() {
        if (state.closed.get())
            throw new IllegalStateException("polygpu: the graph is closed");
        return state.handle;
    }

    /**
     * Replays the recorded launches once; returns when they are submitted, like a launch.
     *
     * @throws StateException if a recorded array was closed, or the runtime is recording
     * @throws IllegalStateException if the graph or its runtime is closed
     */
    public void launch() {
        long g = handle();
        runtime.enter();
        try {
            Native.graphLaunch(g);
        } finally {
            runtime.exit();
        }
    }

    /**
     * The number of recorded launches.
     *
     * @return the count
     * @throws IllegalStateException if the graph or its runtime is closed
     */
    public long calls() {
        long g = handle();
        runtime.enter();
        try {
            return Native.graphCalls(g);
        } finally {
            runtime.exit();
        }
    }

    /** Frees the graph; idempotent. */
    @Override
    public void close() {
        cleanable.clean();
    }
}
