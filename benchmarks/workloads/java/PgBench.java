// PgBench.java: VEC, B&S and JACOBI through polygpu from Java: the same arrays, views, kernels
// and order of launches as the Python versions (benchmarks/workloads/vec.py, bs.py and
// jacobi.py). Run by benchmarks/run.py:
//
//   java -cp polygpu.jar:polygpu-bench.jar PgBench vec --devices cuda:0,1 --n N --partitions 16
//        [--policy P] [--warmup W] [--runs R] [--sample-stride S] [--sample-out FILE]
//        [--kernels DIR] [--iterations I]
//
// Prints one JSON line with the run times, like the other versions.
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongToDoubleFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import polygpu.Access;
import polygpu.DeviceArray;
import polygpu.Dim3;
import polygpu.Graph;
import polygpu.Kernel;
import polygpu.Runtime;

public final class PgBench {
    static final int BLOCK = 256;
    static final Dim3 BLOCK_DIM = new Dim3(BLOCK);
    static final double R = 0.08, V = 0.3, T = 1.0, K = 60.0; // as workloads/bs.py

    /** The command line: --key value pairs. */
    static final class Args {
        String devices = "auto", policy = "minmax-transfer-time", sampleOut = null,
                kernels = "benchmarks/workloads/kernels";
        long n = 0, sampleStride = 1;
        int partitions = 16, warmup = 3, runs = 10, iterations = 20;

        Args(String[] argv, int from) {
            for (int i = from; i < argv.length; i += 2) {
                if (i + 1 >= argv.length)
                    usage();
                String v = argv[i + 1];
                switch (argv[i]) {
                case "--devices" -> devices = v;
                case "--policy" -> policy = v;
                case "--n" -> n = Long.parseLong(v);
                case "--partitions" -> partitions = Integer.parseInt(v);
                case "--warmup" -> warmup = Integer.parseInt(v);
                case "--runs" -> runs = Integer.parseInt(v);
                case "--sample-stride" -> sampleStride = Long.parseLong(v);
                case "--sample-out" -> sampleOut = v;
                case "--kernels" -> kernels = v;
                case "--iterations" -> iterations = Integer.parseInt(v);
                default -> usage();
                }
            }
            if (n <= 0)
                usage();
        }
    }

    static void usage() {
        System.err.println("usage: PgBench vec|bs|jacobi --n N [--devices D] [--policy P]"
                + " [--partitions P] [--warmup W] [--runs R] [--sample-stride S]"
                + " [--sample-out FILE] [--kernels DIR] [--iterations I]");
        System.exit(1);
    }

    // ------------------------------------------------------------ kernels (workloads/common.py)

    static final Pattern INCLUDE =
            Pattern.compile("(?m)^[ \\t]*#[ \\t]*include[ \\t]*\"([^\"]+)\"[ \\t]*$");
    static final Pattern SIGNATURE = Pattern.compile(
            "/\\*\\s*polygpu:\\s*(.*?)\\s*\\*/\\s*extern\\s+\"C\"\\s+__global__\\s+void\\s+(\\w+)",
            Pattern.DOTALL);

    /** The kernel file with each local include pasted in once. */
    static String kernelSource(Path dir, String name, Set<String> seen) {
        String file = name.contains(".") ? name : name + ".cu";
        seen.add(file);
        String text;
        try {
            text = Files.readString(dir.resolve(file), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Matcher m = INCLUDE.matcher(text);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String inc = m.group(1);
            String rep = seen.contains(inc) ? "/* " + inc + ": already included */"
                                            : kernelSource(dir, inc, seen);
            m.appendReplacement(out, Matcher.quoteReplacement(rep));
        }
        m.appendTail(out);
        return out.toString();
    }

    /** Every kernel of kernels/NAME.cu compiled on rt, with its "polygpu:" signature. */
    static Map<String, Kernel> loadKernels(Runtime rt, String dir, String name) {
        String src = kernelSource(Path.of(dir), name, new HashSet<>());
        Map<String, Kernel> ks = new HashMap<>();
        Matcher m = SIGNATURE.matcher(src);
        while (m.find()) {
            String sig = m.group(1).replaceAll("\\s*\\n\\s*\\*[ \\t]?", " ").replaceAll("\\s+", " ");
            ks.put(m.group(2), rt.kernel(src, m.group(2), sig));
        }
        return ks;
    }

    static long cdiv(long a, long b) {
        return (a + b - 1) / b;
    }

    static Dim3 grid1d(long n) {
        return new Dim3((int) Math.max(1, Math.min(cdiv(n, BLOCK), 65535)));
    }

    static Dim3 gridReduce(long n) {
        return new Dim3((int) Math.max(1, Math.min(cdiv(n, BLOCK * 16L), 256)));
    }

    /** JACOBI's row kernels on rows x n (workloads/common.py stencil_geometry). */
    static Dim3 stencilGeometry(long rows, long n) {
        return new Dim3((int) cdiv(n, BLOCK), (int) Math.max(1, Math.min(rows, 65535)));
    }

    /** {offset, count} pairs: ceil(n / p) per partition, the last shorter. */
    static List<long[]> partitions(long n, int p) {
        long s = cdiv(n, p);
        List<long[]> parts = new ArrayList<>();
        for (int i = 0; i < p && i * s < n; i++)
            parts.add(new long[] {i * s, Math.min(s, n - i * s)});
        return parts;
    }

    /** Warm-ups, then timed runs: prepare untimed, run timed (seconds). */
    static double[] timeRuns(Args a, Runnable prepare, Runnable run) {
        double[] t = new double[a.runs];
        for (int i = 0; i < a.warmup + a.runs; i++) {
            prepare.run();
            long t0 = System.nanoTime();
            run.run();
            long t1 = System.nanoTime();
            if (i >= a.warmup)
                t[i - a.warmup] = (t1 - t0) * 1e-9;
        }
        return t;
    }

    /** The sampled outputs, value(i) for i = 0, stride, ... < total, as little-endian doubles. */
    static void writeSample(Args a, long total, LongToDoubleFunction value) throws IOException {
        if (a.sampleOut == null)
            return;
        try (FileChannel f = FileChannel.open(Path.of(a.sampleOut), StandardOpenOption.CREATE,
                     StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer buf = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
            for (long i = 0; i < total; i += a.sampleStride) {
                if (!buf.hasRemaining()) {
                    buf.flip();
                    f.write(buf);
                    buf.clear();
                }
                buf.putDouble(value.applyAsDouble(i));
            }
            buf.flip();
            f.write(buf);
        }
    }

    static void printJson(String bench, Args a, int ndev, double[] times) {
        StringBuilder t = new StringBuilder();
        for (int i = 0; i < times.length; i++)
            t.append(i > 0 ? ", " : "").append(String.format("%.9f", times[i]));
        System.out.printf("{\"bench\": \"%s\", \"version\": \"java\", \"policy\": \"%s\", "
                        + "\"gpus\": %d, \"partitions\": %d, \"n\": %d, \"times_s\": [%s]}%n",
                bench, a.policy, ndev, a.partitions, a.n, t);
        System.out.flush();
    }

    /** Make the host copy the only valid one (as after a host write) without moving data when
     * it is current: a writable view, released at once. */
    static void hostOnly(DeviceArray x) {
        x.asByteBuffer(Access.INOUT);
        x.release();
    }

    /** One host read: waits for the array's last writer and copies it to the host. */
    static void fetch(DeviceArray x) {
        x.asByteBuffer(Access.IN);
        x.release();
    }

    // ------------------------------------------------------------ the two workloads

    static void vec(Args a) throws IOException {
        try (Runtime rt = new Runtime(new Runtime.Options().devices(a.devices).policy(a.policy))) {
            Map<String, Kernel> ks = loadKernels(rt, a.kernels, "vec");
            Kernel init = ks.get("vec_init"), square = ks.get("vec_square"),
                   reduce = ks.get("vec_reduce");
            List<long[]> parts = partitions(a.n, a.partitions);
            int np = parts.size();
            DeviceArray[] x = new DeviceArray[np], y = new DeviceArray[np],
                          x2 = new DeviceArray[np], y2 = new DeviceArray[np],
                          res = new DeviceArray[np];
            for (int i = 0; i < np; i++) {
                long offset = parts.get(i)[0], c = parts.get(i)[1];
                x[i] = rt.array("float32", c);
                y[i] = rt.array("float32", c);
                x2[i] = rt.array("float32", c);
                y2[i] = rt.array("float32", c);
                res[i] = rt.array("float64", 1);
                init.launch(grid1d(c), BLOCK_DIM, x[i], y[i], offset, (int) c);
            }
            for (int i = 0; i < np; i++) { // the inputs live on the host
                fetch(x[i]);
                fetch(y[i]);
                hostOnly(x[i]);
                hostOnly(y[i]);
            }
            double[] total = {0.0};
            Runnable prepare = () -> {
                for (int i = 0; i < np; i++) {
                    hostOnly(x[i]); // the paper rewrites x and y on the host before each run
                    hostOnly(y[i]);
                    res[i].setDouble(0, 0.0);
                }
            };
            Runnable run = () -> {
                for (int i = 0; i < np; i++) {
                    int c = (int) parts.get(i)[1];
                    square.launch(grid1d(c), BLOCK_DIM, x2[i], x[i], c);
                    square.launch(grid1d(c), BLOCK_DIM, y2[i], y[i], c);
                    reduce.launch(gridReduce(c), BLOCK_DIM, res[i], x2[i], y2[i], c);
                }
                double sum = 0.0;
                for (int i = 0; i < np; i++)
                    sum += res[i].getDouble(0); // waits for this partition's reduction only
                total[0] = sum;
            };
            double[] times = timeRuns(a, prepare, run);
            writeSample(a, 1, i -> total[0]);
            printJson("vec", a, rt.devices().size(), times);
        }
    }

    static void bs(Args a) throws IOException {
        try (Runtime rt = new Runtime(new Runtime.Options().devices(a.devices).policy(a.policy))) {
            Map<String, Kernel> ks = loadKernels(rt, a.kernels, "bs");
            Kernel init = ks.get("bs_init"), bs = ks.get("bs");
            List<long[]> parts = partitions(a.n, a.partitions);
            int np = parts.size();
            DeviceArray[] s = new DeviceArray[np], call = new DeviceArray[np];
            for (int i = 0; i < np; i++) {
                long offset = parts.get(i)[0], c = parts.get(i)[1];
                s[i] = rt.array("float64", c);
                call[i] = rt.array("float64", c);
                init.launch(grid1d(c), BLOCK_DIM, s[i], offset, (int) c);
            }
            for (int i = 0; i < np; i++) {
                fetch(s[i]);
                hostOnly(s[i]);
            }
            Runnable prepare = () -> {
                for (int i = 0; i < np; i++)
                    hostOnly(s[i]); // new prices from the host at every run
            };
            Runnable run = () -> {
                for (int i = 0; i < np; i++) {
                    int c = (int) parts.get(i)[1];
                    bs.launch(grid1d(c), BLOCK_DIM, call[i], s[i], c, R, V, T, K);
                    call[i].prefetch(); // the copy to the host follows the kernel at once
                }
                for (int i = 0; i < np; i++)
                    fetch(call[i]);
            };
            double[] times = timeRuns(a, prepare, run);
            long size = parts.get(0)[1];
            writeSample(a, a.n, i -> call[(int) (i / size)].getDouble(i % size));
            printJson("bs", a, rt.devices().size(), times);
        }
    }

    /** Partitions per recording, as workloads/jacobi.py (at most 64 pieces per replay). */
    static final int RECORD_PARTITIONS = 8;

    static void jacobi(Args a) throws IOException {
        long n = a.n;
        int sweeps = a.iterations;
        if (n % 16 != 0 || sweeps % 2 != 0)
            throw new IllegalArgumentException("n must be a multiple of 16 and --iterations even");
        try (Runtime rt = new Runtime(new Runtime.Options().devices(a.devices).policy(a.policy))) {
            Map<String, Kernel> ks = loadKernels(rt, a.kernels, "jacobi");
            Kernel init = ks.get("jacobi_init"), sweep = ks.get("jacobi_sweep"),
                   residual = ks.get("jacobi_residual");
            List<long[]> parts = partitions(n, a.partitions);
            int np = parts.size();
            DeviceArray u = rt.array("float32", n, n), v = rt.array("float32", n, n);
            // Views: each partition's rows [lo, lo + r), and with the halo
            // [max(lo - 1, 0), min(lo + r + 1, n)).
            DeviceArray[] uOwn = new DeviceArray[np], vOwn = new DeviceArray[np],
                          uHalo = new DeviceArray[np], vHalo = new DeviceArray[np];
            for (int i = 0; i < np; i++) {
                long lo = parts.get(i)[0], r = parts.get(i)[1];
                long first = Math.max(lo - 1, 0), last = Math.min(lo + r + 1, n);
                uOwn[i] = u.slice(lo, lo + r);
                vOwn[i] = v.slice(lo, lo + r);
                uHalo[i] = u.slice(first, last);
                vHalo[i] = v.slice(first, last);
            }
            DeviceArray partial = rt.array("float64", np, 256);
            List<DeviceArray> partialRows = partial.split(np);
            List<Graph> graphs = new ArrayList<>();
            DeviceArray[][][] pairs = {{uHalo, vOwn}, {vHalo, uOwn}};
            for (DeviceArray[][] pair : pairs)
                for (int p0 = 0; p0 < np; p0 += RECORD_PARTITIONS) {
                    int from = p0, to = Math.min(np, p0 + RECORD_PARTITIONS);
                    graphs.add(rt.record(() -> {
                        for (int i = from; i < to; i++) {
                            long lo = parts.get(i)[0], r = parts.get(i)[1];
                            sweep.launch(stencilGeometry(r, n), BLOCK_DIM, pair[1][i], pair[0][i],
                                    (int) lo, (int) r, (int) Math.max(lo - 1, 0), (int) n);
                        }
                    }));
                }
            double[] res = {0.0};
            double[] sums = new double[256];
            Runnable run = () -> {
                for (int i = 0; i < np; i++) {
                    long lo = parts.get(i)[0], r = parts.get(i)[1];
                    init.launch(stencilGeometry(r, n), BLOCK_DIM, uOwn[i], (int) lo, (int) r,
                            (int) n);
                }
                for (int k = 0; k < sweeps / 2; k++)
                    for (Graph g : graphs)
                        g.launch();
                for (int i = 0; i < np; i++) {
                    long count = parts.get(i)[1] * n;
                    residual.launch(gridReduce(count), BLOCK_DIM, partialRows.get(i), uOwn[i],
                            vOwn[i], count);
                }
                double sum = 0.0;
                for (int i = 0; i < np; i++) {
                    partialRows.get(i).copyTo(sums); // waits for this partition only
                    for (double x : sums)
                        sum += x;
                }
                res[0] = sum;
            };
            double[] times = timeRuns(a, () -> {}, run);
            // The checked rows (workloads/jacobi.py check_rows), a row view read each.
            long s = n / 16;
            List<Long> rows = new ArrayList<>(List.of(0L, 1L));
            for (long k = 1; k < 16; k++) {
                rows.add(k * s - 1);
                rows.add(k * s);
            }
            rows.add(n - 2);
            rows.add(n - 1);
            float[][] values = new float[rows.size()][(int) n];
            for (int k = 0; k < rows.size(); k++)
                try (DeviceArray row = u.slice(rows.get(k), rows.get(k) + 1)) {
                    row.copyTo(values[k]);
                }
            long total = rows.size() * n;
            writeSample(a, total + 1,
                    i -> i == total ? res[0] : values[(int) (i / n)][(int) (i % n)]);
            printJson("jacobi", a, rt.devices().size(), times);
            for (Graph g : graphs)
                g.close();
        }
    }

    public static void main(String[] argv) throws IOException {
        if (argv.length < 1)
            usage();
        Args a = new Args(argv, 1);
        switch (argv[0]) {
        case "vec" -> vec(a);
        case "bs" -> bs(a);
        case "jacobi" -> jacobi(a);
        default -> usage();
        }
    }
}
