package polygpu;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Kernels, runtimes and a view of the runtime's DAG (snapshot or JSON), shared by the tests. */
final class TestSupport {
    private TestSupport() {
    }

    static final int N = 1000;
    static final Dim3 GRID = new Dim3((N + 255) / 256), BLOCK = new Dim3(256);

    static final String SRC = """
            extern "C" __global__ void fill(float *y, float v, int n) {
              int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = v; }
            extern "C" __global__ void add1(float *y, const float *x, int n) {
              int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] + 1.0f; }
            extern "C" __global__ void sum2(float *y, const float *a, const float *b, int n) {
              int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a[i] + b[i]; }
            extern "C" __global__ void scale(float *y, float s, int n) {
              int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = y[i] * s; }
            extern "C" __global__ void iadd(int *y, int v, int n) {
              int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = y[i] + v; }
            extern "C" __global__ void dscale(double *y, double s, int n) {
              int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = y[i] * s; }
            extern "C" __global__ void ladd(long long *y, long long v, int n) {
              int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = y[i] + v; }
            extern "C" __global__ void sadd(short *y, short v, signed char b, int n) {
              int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = y[i] + v + b; }
            """;

    /** fill with an out-only y: no copy in, and a write that orders after earlier readers. */
    static final String FILL_OUT = "out float *y, float v, int n";

    /** A runtime on PG_DEVICES's devices (host:4 under CTest), with a policy or the default. */
    static Runtime runtime(String policy) {
        Runtime.Options o = new Runtime.Options();
        if (policy != null)
            o.policy(policy);
        return new Runtime(o);
    }

    /** One vertex of the DAG export. */
    record Vertex(long id, String kind, String name, int device, int stream) {
    }

    /** The runtime's DAG, from its snapshot or read back from the JSON export. */
    static final class Dag {
        final List<Vertex> vertices = new ArrayList<>();
        final List<long[]> edges = new ArrayList<>();

        static Dag of(Runtime rt) {
            polygpu.Dag s = rt.dagSnapshot();
            Dag d = new Dag();
            for (polygpu.Dag.Vertex v : s.vertices()) {
                String kind = v.kind().name().toLowerCase(java.util.Locale.ROOT);
                d.vertices.add(new Vertex(v.id(), kind, v.name(), v.device(), v.stream()));
            }
            for (polygpu.Dag.Edge e : s.edges())
                d.edges.add(new long[] {e.from(), e.to()});
            return d;
        }

        /** The JSON export read with indexOf: our own fixed schema, one vertex per line. */
        static Dag parse(String json) {
            Dag d = new Dag();
            int edgesAt = json.indexOf("\"edges\":[");
            if (edgesAt < 0 || !json.startsWith("{\"vertices\":["))
                throw new AssertionError("not a DAG export: " + json);
            int p = json.indexOf("{\"id\":");
            while (p >= 0 && p < edgesAt) {
                int end = json.indexOf("{\"id\":", p + 1);
                if (end < 0 || end > edgesAt)
                    end = edgesAt;
                String v = json.substring(p, end);
                d.vertices.add(new Vertex(number(v, "id"), string(v, "kind"), string(v, "name"),
                        (int) number(v, "device"), (int) number(v, "stream")));
                p = end < edgesAt ? end : -1;
            }
            Matcher m = Pattern.compile("\\[(\\d+),(\\d+)\\]").matcher(json);
            m.region(edgesAt, json.length());
            while (m.find())
                d.edges.add(new long[] {Long.parseLong(m.group(1)), Long.parseLong(m.group(2))});
            return d;
        }

        private static String field(String v, String key) {
            int i = v.indexOf("\"" + key + "\":");
            if (i < 0)
                throw new AssertionError("vertex without \"" + key + "\": " + v);
            return v.substring(i + key.length() + 3);
        }

        private static long number(String v, String key) {
            String f = field(v, key);
            int n = 0;
            while (n < f.length() && (Character.isDigit(f.charAt(n)) || f.charAt(n) == '-'))
                n++;
            return Long.parseLong(f.substring(0, n));
        }

        private static String string(String v, String key) {
            String f = field(v, key);
            StringBuilder b = new StringBuilder();
            for (int i = 1; i < f.length() && f.charAt(i) != '"'; i++)
                b.append(f.charAt(i) == '\\' ? f.charAt(++i) : f.charAt(i));
            return b.toString();
        }

        /** Ids of the vertices of a kind ("kernel", "host_read", ...), oldest first. */
        List<Long> ids(String kind) {
            List<Long> out = new ArrayList<>();
            for (Vertex v : vertices)
                if (v.kind().equals(kind))
                    out.add(v.id());
            return out;
        }

        Vertex vertex(long id) {
            for (Vertex v : vertices)
                if (v.id() == id)
                    return v;
            throw new AssertionError("no vertex " + id);
        }

        boolean edge(long from, long to) {
            for (long[] e : edges)
                if (e[0] == from && e[1] == to)
                    return true;
            return false;
        }
    }
}
