package polygpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Node.status() (issue 39): a runtime sharing the node is a client; share "off" is not. */
class NodeTest {
    static final String FILL = """
            extern "C" __global__ void fill(float *y, int n) {
              int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 2.0f; }
            """;

    @SuppressWarnings("unchecked")
    static Map<String, Object> mine(Map<String, Object> s) {
        long pid = ProcessHandle.current().pid();
        for (Object c : (List<Object>) s.get("clients"))
            if (((Map<String, Object>) c).get("pid").equals(pid))
                return (Map<String, Object>) c;
        return null;
    }

    @Test
    @SuppressWarnings("unchecked")
    void aSharingRuntimeIsAClient() {
        try (Runtime rt = new Runtime(new Runtime.Options().devices("host:2").share("node"))) {
            Kernel k = rt.kernel(FILL, "fill");
            try (DeviceArray y = rt.array(DType.FLOAT32, 1024)) {
                k.launch(new Dim3(4), new Dim3(256), y, 1024);
                rt.sync();
                Map<String, Object> s = Node.status();
                assertEquals(Set.of("clients", "devices"), s.keySet());
                Map<String, Object> c = mine(s);
                assertNotNull(c, s.toString());
                assertEquals(Set.of("pid", "language", "devices", "inflight", "bytes"), c.keySet());
                assertEquals("java", c.get("language"));
                assertEquals(List.of("host:0", "host:1"), c.get("devices"));
                assertEquals(4096L, c.get("bytes"));
                assertEquals(0L, c.get("inflight"));
                Map<String, Object> d = (Map<String, Object>) ((List<Object>) s.get("devices")).get(0);
                assertEquals(Set.of("device", "inflight", "bytes", "clients"), d.keySet());
            }
        }
        assertNull(mine(Node.status()));
    }

    @Test
    void shareOffIsNotAClient() {
        try (Runtime rt = new Runtime(new Runtime.Options().devices("host:1").share("off"))) {
            assertEquals(1, rt.devices().size());
            assertNull(mine(Node.status()));
        }
        ArgumentException e = assertThrows(ArgumentException.class,
                () -> new Runtime(new Runtime.Options().devices("host:1").share("nodes")));
        assertTrue(e.getMessage().contains("unknown share 'nodes'"), e.getMessage());
    }
}
