import polygpu.DeviceArray;
import polygpu.Dim3;
import polygpu.Kernel;
import polygpu.Runtime;

public class Quickstart {
    public static void main(String[] args) {
        String src = """
            extern "C" __global__ void square(float *y, const float *x, int n) {
                int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] * x[i]; }""";
        float[] values = new float[1000];
        for (int i = 0; i < values.length; i++)
            values[i] = i;
        try (Runtime rt = new Runtime(new Runtime.Options().devices("host:4"));
             Kernel k = rt.kernel(src, "square");
             DeviceArray x = rt.array("float32", 1000);
             DeviceArray y = rt.array("float32", 1000)) {
            x.copyFrom(values);
            k.launch(new Dim3(4), new Dim3(256), y, x, 1000);
            System.out.println(y.getFloat(3));
        }
    }
}
