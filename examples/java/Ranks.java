// Ranks.java: the same program on one process or on several (MPI ranks), same results.
//
//   java -cp build/bindings/java/polygpu-bundle.jar examples/java/Ranks.java
//   mpirun --oversubscribe -np 3 java -cp build/bindings/java/polygpu-bundle.jar examples/java/Ranks.java
//   (--oversubscribe: more ranks than cores; as root Open MPI also wants --allow-run-as-root)
//
// Every rank runs the whole program: split spreads x's views over the ranks in blocks, each
// launch runs on the rank owning what it writes, the second kernel reads x's next row too
// (polygpu sends each rank the rows it lacks), and reading y gives every rank the whole result.
// Devices come from PG_DEVICES (default: this rank's GPUs, else one CPU device).
import java.util.List;
import polygpu.DeviceArray;
import polygpu.Dim3;
import polygpu.Kernel;
import polygpu.Runtime;
import polygpu.Stats;

public final class Ranks {
    static final String SOURCE = """
            extern "C" __global__ void ramp(float *x, int lo, int n) {
                int i = blockIdx.x * blockDim.x + threadIdx.x;
                if (i < n) x[i] = (float)((lo + i) % 97);
            }
            extern "C" __global__ void neighbours(float *y, const float *x, int lo, int n,
                                                  int total) {
                int i = blockIdx.x * blockDim.x + threadIdx.x;
                if (i < n) y[i] = x[lo + i] + 2.0f * x[(lo + i + 1) % total];
            }
            """;

    public static void main(String[] args) {
        int n = 1 << 14, parts = 6;
        try (Runtime rt = new Runtime(new Runtime.Options());
                Kernel ramp = rt.kernel(SOURCE, "ramp");
                Kernel neighbours = rt.kernel(SOURCE, "neighbours");
                DeviceArray x = rt.array("float32", n);
                DeviceArray y = rt.array("float32", n)) {
            List<DeviceArray> xs = x.split(parts), ys = y.split(parts); // blocks per rank
            int[] lo = new int[parts];
            for (int p = 1; p < parts; p++)
                lo[p] = lo[p - 1] + (int) xs.get(p - 1).shape()[0];
            for (int p = 0; p < parts; p++) { // each on its view's owner only
                int rows = (int) xs.get(p).shape()[0];
                ramp.launch(new Dim3((rows + 255) / 256), new Dim3(256), xs.get(p), lo[p], rows);
            }
            for (int p = 0; p < parts; p++) {
                int rows = (int) ys.get(p).shape()[0];
                neighbours.launch(new Dim3((rows + 255) / 256), new Dim3(256), ys.get(p), x,
                        lo[p], rows, n);
            }
            float[] v = new float[n];
            y.copyTo(v); // a host read: every rank gets the whole result
            double sum = 0;
            for (int i = 0; i < n; i++) {
                float want = (float) (i % 97) + 2.0f * (float) ((i + 1) % n % 97);
                if (v[i] != want)
                    throw new AssertionError("rank " + rt.rank() + ": y[" + i + "] = " + v[i]
                            + ", want " + want);
                sum += v[i];
            }
            if (rt.rank() == 0) {
                Stats s = rt.stats();
                System.out.printf("%d rank(s): checksum %.1f; rank 0 sent %d and received %d "
                        + "messages%n", rt.nranks(), sum, s.rankMessagesSent(),
                        s.rankMessagesReceived());
            }
            for (DeviceArray v2 : xs)
                v2.close();
            for (DeviceArray v2 : ys)
                v2.close();
        }
    }
}
