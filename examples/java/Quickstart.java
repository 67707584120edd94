// Quickstart.java: two independent launches and one that depends on both, on every device.
//
//   java -cp build/bindings/java/polygpu-bundle.jar examples/java/Quickstart.java
//     (Java 17 runs one source file directly; the build also makes it as a class in
//     build/bindings/java/polygpu-quickstart.jar:
//      java -cp build/bindings/java/polygpu-bundle.jar:build/bindings/java/polygpu-quickstart.jar Quickstart)
//
// Devices come from PG_DEVICES ("cuda", "host:4", ...); by default every GPU, or four CPU devices
// with separate memories when there is no GPU.
import java.util.Arrays;
import polygpu.DeviceArray;
import polygpu.DeviceException;
import polygpu.Dim3;
import polygpu.Kernel;
import polygpu.Runtime;

public final class Quickstart {
    static final String SOURCE = """
            extern "C" __global__ void square(float *y, const float *x, int n) {
                int i = blockIdx.x * blockDim.x + threadIdx.x;
                if (i < n) y[i] = x[i] * x[i];
            }
            extern "C" __global__ void add(float *z, const float *a, const float *b, int n) {
                int i = blockIdx.x * blockDim.x + threadIdx.x;
                if (i < n) z[i] = a[i] + b[i];
            }
            """;

    // GPUs if there are any, else four CPU devices (the rule of every example).
    static Runtime open() {
        String devices = System.getenv("PG_DEVICES");
        try {
            return new Runtime(new Runtime.Options().devices(devices != null ? devices : "cuda"));
        } catch (DeviceException e) {
            return new Runtime(new Runtime.Options().devices("host:4")); // no GPU
        }
    }

    public static void main(String[] args) {
        int n = 1000;
        try (Runtime rt = open();
                Kernel square = rt.kernel(SOURCE, "square");
                Kernel add = rt.kernel(SOURCE, "add");
                DeviceArray x1 = rt.array("float32", n);
                DeviceArray x2 = rt.array("float32", n);
                DeviceArray y1 = rt.array("float32", n);
                DeviceArray y2 = rt.array("float32", n);
                DeviceArray z = rt.array("float32", n)) {
            rt.devices().forEach(d -> System.out.println("device " + d.id() + ": " + d.name()
                    + " (" + d.kind() + ", " + d.memoryBytes() / (1 << 20) + " MiB)"));

            float[] ramp = new float[n];
            for (int i = 0; i < n; i++)
                ramp[i] = i;
            float[] twos = new float[n];
            Arrays.fill(twos, 2.0f);
            x1.copyFrom(ramp); // one host access each
            x2.copyFrom(twos);

            Dim3 grid = new Dim3((n + 255) / 256), block = new Dim3(256);
            // const float *x makes x an input, float *y an output: the two squares share no data,
            // so they get no edge and may run at the same time on different devices.
            square.launch(grid, block, y1, x1, n);
            square.configure(grid, block).launch(y2, x2, n);
            // This one reads both results: it waits for both squares, nothing else.
            add.launch(grid, block, z, y1, y2, n);

            float a = y1.getFloat(3), b = y2.getFloat(3), c = z.getFloat(3);
            System.out.println("y1[3] = " + a + ", y2[3] = " + b + ", z[3] = " + c);
            if (a != 9.0f || b != 4.0f || c != 13.0f)
                throw new AssertionError("wrong results: expected 9.0, 4.0 and 13.0");

            System.out.println("DAG: " + rt.dag());
            System.out.println(rt.stats());
        }
    }
}
