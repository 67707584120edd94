package polygpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static polygpu.TestSupport.BLOCK;
import static polygpu.TestSupport.GRID;
import static polygpu.TestSupport.N;
import static polygpu.TestSupport.SRC;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Issue 36's binding probes in Java: booleans for on/off options, NUL in option strings. */
class HardeningTest {

    /** {@code models=True} was refused in Python ("unknown models '1'"); Java had no boolean. */
    @Test
    void onOffOptionsTakeBooleans(@TempDir Path dir) {
        for (String name : new String[] {"models", "prefetch", "elide_copies"}) {
            for (boolean v : new boolean[] {true, false}) {
                Runtime.Options o = new Runtime.Options().devices("host:1")
                        .cacheDir(dir.toString()).set(name, v);
                assertEquals(v ? "on" : "off", o.values().get(name));
                new Runtime(o).close();
            }
        }
        try (Runtime rt = new Runtime(new Runtime.Options().devices("host:1")
                .cacheDir(dir.toString()).models(true))) {
            DeviceArray y = rt.array("float32", N);
            rt.kernel(SRC, "fill").launch(GRID, BLOCK, y, 1.0f, N);
            rt.sync();
            assertTrue(rt.models().size() > 0, "models(true) learns");
        }
        try (Runtime rt = new Runtime(new Runtime.Options().devices("host:1")
                .cacheDir(dir.toString()).policy("min-finish-time").models(false))) {
            assertEquals(0, rt.models().size(), "models(false) keeps none");
        }
    }

    /** Java converts nothing into an array: a double[] never reaches an int32 array. */
    @Test
    void doublesNeverGoIntoIntegerArrays() {
        try (Runtime rt = new Runtime(new Runtime.Options().devices("host:1"))) {
            DeviceArray a = rt.array("int32", 2);
            ArgumentException e = assertThrows(ArgumentException.class,
                    () -> a.copyFrom(new double[] {1.5, 2.5}));
            assertTrue(e.getMessage().contains("needs an array of float64"), e.getMessage());
            assertThrows(ArgumentException.class, () -> a.setDouble(0, 1.5));
            assertThrows(ArgumentException.class, () -> a.copyFrom(new float[] {1.5f, 2f}));
            assertEquals(0, a.getInt(0));
        }
    }

    @Test
    void pathOptionsRefuseBooleans() {
        for (String name : new String[] {"trace", "profile", "cache_dir", "interconnect"}) {
            ArgumentException e = assertThrows(ArgumentException.class,
                    () -> new Runtime.Options().set(name, true));
            assertTrue(e.getMessage().contains("option " + name + " takes a path"),
                    e.getMessage());
        }
    }

    /** Runtime(cache_dir="/tmp/x\0y") used /tmp/x in Python; Java refuses it before C. */
    @Test
    void nulInAnOptionIsRefused() {
        String[][] cases = {{"cache_dir", "/tmp/x\0y"}, {"policy", "round-robin\0junk"},
                {"devices", "host:1\0junk"}, {"devices", "sim:dgx1-v100\0junk"},
                {"check", "off\0junk"}, {"lo\0g", "off"}};
        for (String[] c : cases) {
            ArgumentException e = assertThrows(ArgumentException.class,
                    () -> new Runtime(new Runtime.Options().set(c[0], c[1])).close());
            assertTrue(e.getMessage().contains("contains a NUL character"), e.getMessage());
        }
    }
}
