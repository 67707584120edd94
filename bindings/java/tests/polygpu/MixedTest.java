package polygpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * GPUs and CPU devices in one runtime from Java (simulated GPUs beside {@code host:2}): a value
 * goes from a CPU device to a GPU and back through one coherence, the {@code where} overload keeps
 * each kernel to its class, and {@code where="gpu"} without a GPU names the devices there are.
 */
class MixedTest {
    private static final String SRC =
            "extern \"C\" __global__ void fill(float *y, float v, int n) {\n"
            + "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = v; }\n"
            + "extern \"C\" __global__ void add1(float *y, const float *x, int n) {\n"
            + "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] + 1.0f; }\n";
    private static final int N = 1024;
    private static final Dim3 GRID = new Dim3(N / 256), BLOCK = new Dim3(256);

    @Test
    void valuesCrossClassesAndWhereHolds() {
        try (Runtime rt = new Runtime(new Runtime.Options()
                .devices("sim:h200x2-nv18,host_time=0,host:2").policy("round-robin"))) {
            var devs = rt.devices();
            assertEquals(4, devs.size());
            assertEquals(Device.Kind.CUDA, devs.get(0).kind());
            assertEquals(Device.Kind.CPU, devs.get(3).kind());
            Kernel fill = rt.kernel(SRC, "fill", null, null, "cpu");
            Kernel onGpu = rt.kernel(SRC, "add1", null, null, "gpu");
            Kernel onCpu = rt.kernel(SRC, "add1", null, null, "cpu");
            DeviceArray a = rt.array("float32", N), b = rt.array("float32", N),
                    c = rt.array("float32", N);
            fill.launch(GRID, BLOCK, a, 2.0f, N);
            onGpu.launch(GRID, BLOCK, b, a, N);
            onCpu.launch(GRID, BLOCK, c, b, N);
            float[] h = new float[N];
            c.copyTo(h);
            for (int i = 0; i < N; i++)
                assertEquals(4.0f, h[i], "c[" + i + "]");
            int gpuAdds = 0, cpuAdds = 0;
            for (Dag.Vertex v : rt.dagSnapshot().vertices()) {
                if (v.kind() != Dag.Kind.KERNEL)
                    continue;
                if (v.name().equals("fill"))
                    assertTrue(v.device() >= 2, "fill (where=cpu) ran on device " + v.device());
                else if (v.device() < 2)
                    gpuAdds++;
                else
                    cpuAdds++;
            }
            assertEquals(1, gpuAdds);
            assertEquals(1, cpuAdds);
        }
    }

    @Test
    void whereGpuWithoutGpuNamesTheDevices() {
        try (Runtime rt = new Runtime(new Runtime.Options().devices("host:2"))) {
            ArgumentException e = assertThrows(ArgumentException.class,
                    () -> rt.kernel(SRC, "fill", null, null, "gpu"));
            assertTrue(e.getMessage().contains("no GPU"), e.getMessage());
            assertTrue(e.getMessage().contains("1 (CPU device"), e.getMessage());
            assertThrows(ArgumentException.class, () -> rt.kernel(SRC, "fill", null, null, "tpu"));
            rt.kernel(SRC, "fill", null, null, "cpu").launch(GRID, BLOCK, rt.array("float32", N),
                    1.0f, N); /* still usable */
        }
    }
}
