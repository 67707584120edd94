package polygpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * One launch over every device from Java: a kernel whose signature says what each thread block
 * touches runs as one part per device with the serial result; {@link Kernel#split(String)} and the
 * runtime's option {@code split} say whether; errors name what is wrong.
 */
class SplitTest {
    private static final String SRC =
            "extern \"C\" __global__ void saxpy(float *y, const float *x, float a, int n) {\n"
            + "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }\n";
    private static final String SIG =
            "inout(chunks=blocks) float *y, in(chunks=blocks) const float *x, float a, int n";
    private static final int N = 4096;

    private static TreeSet<Integer> devices(Runtime rt) {
        TreeSet<Integer> s = new TreeSet<>();
        for (Dag.Vertex v : rt.dagSnapshot().vertices())
            if (v.kind() == Dag.Kind.KERNEL && v.name().equals("saxpy"))
                s.add(v.device());
        return s;
    }

    @Test
    void oneLaunchRunsOnEveryDevice() {
        try (Runtime rt = new Runtime(new Runtime.Options().devices("host:4"))) {
            Kernel k = rt.kernel(SRC, "saxpy", SIG);
            float[] hx = new float[N], hy = new float[N];
            for (int i = 0; i < N; i++) {
                hx[i] = i;
                hy[i] = 1;
            }
            DeviceArray x = rt.array("float32", N), y = rt.array("float32", N);
            x.copyFrom(hx);
            y.copyFrom(hy);
            k.launch(new Dim3(N / 256), new Dim3(256), y, x, 2.0f, N);
            y.copyTo(hy);
            for (int i = 0; i < N; i++)
                assertEquals(2.0f * i + 1, hy[i], "y[" + i + "]");
            assertEquals("[0, 1, 2, 3]", devices(rt).toString());
            TreeSet<String> parts = new TreeSet<>(); /* one call with parts 1..4 */
            for (Dag.Vertex v : rt.dagSnapshot().vertices())
                if (v.kind() == Dag.Kind.KERNEL && v.name().equals("saxpy"))
                    parts.add(v.part() + "/" + v.parts());
            assertEquals("[1/4, 2/4, 3/4, 4/4]", parts.toString());
        }
    }

    @Test
    void splitModesAndErrors() {
        try (Runtime rt = new Runtime(new Runtime.Options().devices("host:2").set("split", "off"))) {
            Kernel k = rt.kernel(SRC, "saxpy", SIG);
            DeviceArray x = rt.array("float32", N), y = rt.array("float32", N);
            k.launch(new Dim3(N / 256), new Dim3(256), y, x, 1.0f, N);
            rt.sync();
            assertEquals("[0]", devices(rt).toString());
            assertSame(k, k.split("on"));
            k.launch(new Dim3(N / 256), new Dim3(256), y, x, 1.0f, N);
            rt.sync();
            assertEquals("[0, 1]", devices(rt).toString());
            ArgumentException e = assertThrows(ArgumentException.class,
                    () -> rt.kernel(SRC, "saxpy").split("on"));
            assertTrue(e.getMessage().contains("parameter 1"), e.getMessage());
            assertThrows(ArgumentException.class, () -> k.split("sometimes"));
        }
    }
}
