package polygpu;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A snapshot of a runtime's DAG, from {@link Runtime#dagSnapshot()}: one vertex per computation
 * (kernel launch, host access, copy) of the most recent 65,536, one edge per inferred
 * dependency. It is a copy: later work does not change it, and it stays usable after the
 * runtime is closed. The JSON and DOT exports hold the same data.
 *
 * @param vertices the computations, oldest first (unmodifiable)
 * @param edges the dependencies, in the order of their {@code to} vertex (unmodifiable)
 */
public record Dag(List<Vertex> vertices, List<Edge> edges) {

    /** What a vertex is, as the C enum {@code pg_dag_kind}. */
    public enum Kind {
        /** A kernel launch. */
        KERNEL,
        /** An access from outside that only reads: a host read, a read-only view. */
        HOST_READ,
        /** An access from outside that writes: a host write, a writable view. */
        HOST_WRITE,
        /** A copy the runtime issued: an input brought to a device, a prefetch, a write-back. */
        COPY
    }

    /**
     * An array argument of a vertex.
     *
     * @param array the array's id ({@link DeviceArray#id()})
     * @param access how the computation uses it
     */
    public record Arg(long array, Access access) {
    }

    /**
     * One computation.
     *
     * @param id its id: increasing in submission order, from 1
     * @param kind what it is
     * @param name the kernel's name, {@code "host_read"}, {@code "copy a3 0->host"} ...
     * @param device where it ran: a device id ({@link Device#id()}), or -1 for the host
     * @param stream the stream number on that device, -1 on the host
     * @param args its array arguments (unmodifiable)
     * @param submitNs when it was submitted, nanoseconds since the runtime was created
     * @param startNs when it started on the same clock; 0 while it has not run or when it is
     *     not timed (GPUs time work only with the trace option)
     * @param endNs when it ended, as {@code startNs}
     * @param bytes copies: the bytes moved (0 for other kinds)
     * @param src copies: the source, a device id or -1 for the host
     * @param dst copies: the destination, a device id or -1 for the host
     * @param rank the rank that ran it ({@link Runtime#rank()}; 0 single-process): each rank
     *     records its own work
     * @param part a part of one launch split over devices ({@link Kernel#split(String)}): which
     *     part, from 1; 0 for anything else
     * @param parts how many parts that launch has; 0 for anything else
     */
    public record Vertex(long id, Kind kind, String name, int device, int stream, List<Arg> args,
            long submitNs, long startNs, long endNs, long bytes, int src, int dst, int rank,
            int part, int parts) {
    }

    /**
     * A dependency: {@code to} waited for {@code from}.
     *
     * @param from the vertex id of the earlier computation
     * @param to the vertex id of the later one
     */
    public record Edge(long from, long to) {
    }

    /**
     * The vertex with an id.
     *
     * @param id a vertex id
     * @return the vertex, or empty if the snapshot does not hold it
     */
    public Optional<Vertex> vertex(long id) {
        for (Vertex v : vertices)
            if (v.id() == id)
                return Optional.of(v);
        return Optional.empty();
    }

    /** Numbers per vertex in {@link Native#dagSnapshot(long)}'s first array. */
    private static final int PER_VERTEX = 14;

    /** From {@link Native#dagSnapshot(long)}'s arrays. */
    static Dag fromNative(Object[] raw) {
        long[] n = (long[]) raw[0];
        String[] names = (String[]) raw[1];
        long[] a = (long[]) raw[2];
        long[] e = (long[]) raw[3];
        Kind[] kinds = Kind.values();
        Access[] accesses = Access.values(); /* codes 1, 2, 3 */
        List<Vertex> vertices = new ArrayList<>(names.length);
        int arg = 0;
        for (int i = 0; i < names.length; i++) {
            int b = i * PER_VERTEX;
            int nargs = (int) n[b + 4];
            List<Arg> args = new ArrayList<>(nargs);
            for (int j = 0; j < nargs; j++, arg++)
                args.add(new Arg(a[2 * arg], accesses[(int) a[2 * arg + 1] - 1]));
            vertices.add(new Vertex(n[b], kinds[(int) n[b + 1]], names[i], (int) n[b + 2],
                    (int) n[b + 3], List.copyOf(args), n[b + 5], n[b + 6], n[b + 7], n[b + 8],
                    (int) n[b + 9], (int) n[b + 10], (int) n[b + 11], (int) n[b + 12],
                    (int) n[b + 13]));
        }
        List<Edge> edges = new ArrayList<>(e.length / 2);
        for (int i = 0; i + 1 < e.length; i += 2)
            edges.add(new Edge(e[i], e[i + 1]));
        return new Dag(List.copyOf(vertices), List.copyOf(edges));
    }
}
