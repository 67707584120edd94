package polygpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Chunked outputs from Java: a signature {@code "out(chunks=blocks) float *y"} lets a copy of y
 * to the host start chunk by chunk while the kernel runs; the values are those of a plain
 * copy, the DAG shows the parts, and a malformed declaration names the form.
 */
class ChunksTest {
    private static final String SRC = "extern \"C\" __global__ void produce(float *y, int n, int reps) {\n"
            + "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;\n"
            + "  float v = (float)i; for (int r = 0; r < reps; r++) v = v * 0.5f + (float)i * 0.5f;\n"
            + "  y[i] = v + 1.0f; }\n";
    private static final int N = 16384, B = 128;

    @Test
    void chunkedOutputComesToTheHostInParts() {
        Runtime.Options o = new Runtime.Options().devices("host:1").set("chunk_bytes", "8K");
        try (Runtime rt = new Runtime(o)) {
            Kernel k = rt.kernel(SRC, "produce", "out(chunks=blocks) float *y, int n, int reps");
            DeviceArray y = rt.array("float32", N);
            k.launch(new Dim3(N / B), new Dim3(B), y, N, 2000);
            y.prefetch();
            float[] h = new float[N];
            y.copyTo(h);
            for (int i = 0; i < N; i++)
                assertEquals(i + 1.0f, h[i], "y[" + i + "]");
            int parts = 0;
            long bytes = 0;
            for (Dag.Vertex v : rt.dagSnapshot().vertices())
                if (v.kind() == Dag.Kind.COPY && v.name().contains(" chunk ")) {
                    parts++;
                    bytes += v.bytes();
                }
            assertEquals(N * 4 / 8192, parts);
            assertEquals(N * 4L, bytes);
        }
    }

    @Test
    void malformedDeclarationNamesTheForm() {
        try (Runtime rt = new Runtime(new Runtime.Options().devices("host:1"))) {
            ArgumentException e = assertThrows(ArgumentException.class,
                    () -> rt.kernel(SRC, "produce", "out(chunks=rows) float *y, int n, int reps"));
            assertTrue(e.getMessage().contains("chunks=blocks"), e.getMessage());
        }
    }
}
