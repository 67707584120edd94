import java.util.Arrays;
import polygpu.DeviceArray;
import polygpu.Dim3;
import polygpu.Kernel;
import polygpu.Runtime;

/**
 * Java-level launch of an empty 4-argument kernel through polygpu: microseconds per launch,
 * median and mean of many, each timed alone (System.nanoTime) in bursts of 64 with a sync
 * between bursts, as benchmarks/python_launch.py and lua_launch.lua do, so the binding's own
 * cost reads against launch_overhead's C figure on the same devices. Usage (from the
 * repository root, after the build): {@code javac -cp build/bindings/java/polygpu.jar -d /tmp
 * benchmarks/java/JavaLaunch.java && java -cp build/bindings/java/polygpu.jar:/tmp
 * -Djava.library.path=build/bindings/java JavaLaunch [launches] [devices]}.
 */
public final class JavaLaunch {
    private static final String SRC = "extern \"C\" __global__ void empty(float *a, const float *b,"
            + " int n, float s) {\n  if (n < 0) a[0] = b[0] * s; }";
    private static final int BURST = 64;

    public static void main(String[] args) {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 20000;
        String devices = args.length > 1 ? args[1] : "cuda:0";
        try (Runtime rt = new Runtime(new Runtime.Options().devices(devices))) {
            Kernel k = rt.kernel(SRC, "empty");
            DeviceArray a = rt.array("float32", 256), b = rt.array("float32", 256);
            Dim3 grid = new Dim3(1), block = new Dim3(32);
            for (int i = 0; i < 20000; i++) { // warm-up: the JIT compiles the call path
                k.launch(grid, block, a, b, 256, 2.0f);
                if (i % BURST == BURST - 1)
                    rt.sync();
            }
            rt.sync();
            double[] t = new double[n];
            double sum = 0;
            for (int i = 0; i < n; i++) {
                long t0 = System.nanoTime();
                k.launch(grid, block, a, b, 256, 2.0f);
                t[i] = (System.nanoTime() - t0) / 1e3;
                sum += t[i];
                if (i % BURST == BURST - 1)
                    rt.sync();
            }
            rt.sync();
            Arrays.sort(t);
            System.out.printf("polygpu java devices=%s launches=%d: median %.2f us, mean %.2f us%n",
                    devices, n, t[n / 2], sum / n);
        }
    }
}
