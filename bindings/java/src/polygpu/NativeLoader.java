package polygpu;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Loads libpolygpu_jni: from {@code java.library.path} when it is there, otherwise from the jar,
 * where a bundled build keeps it under {@code polygpu/native/<os>-<arch>/} with a file
 * {@code libs} listing the libraries in load order (libpolygpu first: the JNI library needs it),
 * and a file {@code data} listing what the library finds beside itself (the simulator's preset
 * topologies, {@code sim-presets/*.topo}), extracted into the same folder.
 */
final class NativeLoader {
    private NativeLoader() {
    }

    static void load() {
        UnsatisfiedLinkError fromPath;
        try {
            System.loadLibrary("polygpu_jni");
            return;
        } catch (UnsatisfiedLinkError e) {
            fromPath = e;
        }
        String dir = "/polygpu/native/" + platform() + "/";
        List<String> libs = bundled(dir, "libs");
        if (libs.isEmpty()) {
            UnsatisfiedLinkError e = new UnsatisfiedLinkError("polygpu: libpolygpu_jni is "
                    + "neither on java.library.path (" + System.getProperty("java.library.path")
                    + ") nor in the jar under " + dir + ": pass -Djava.library.path=<folder "
                    + "of libpolygpu_jni.so> or use the bundled jar");
            e.addSuppressed(fromPath);
            throw e;
        }
        try {
            Path tmp = Files.createTempDirectory("polygpu-jni");
            tmp.toFile().deleteOnExit();
            for (String name : bundled(dir, "data")) {
                Path file = tmp.resolve(name).normalize();
                if (!file.startsWith(tmp))
                    throw new IOException("the jar lists " + name + " outside its folder");
                Files.createDirectories(file.getParent());
                file.getParent().toFile().deleteOnExit(); /* deleted after the files in it */
                try (InputStream in = NativeLoader.class.getResourceAsStream(dir + name)) {
                    if (in == null)
                        throw new IOException("the jar lists " + dir + name + " in " + dir
                                + "data but does not contain it: rebuild the jar");
                    Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
                }
                file.toFile().deleteOnExit();
            }
            for (String lib : libs) {
                Path file = tmp.resolve(lib);
                try (InputStream in = NativeLoader.class.getResourceAsStream(dir + lib)) {
                    if (in == null)
                        throw new UnsatisfiedLinkError("polygpu: the jar lists " + dir + lib
                                + " in " + dir + "libs but does not contain it: rebuild the jar");
                    Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
                }
                file.toFile().deleteOnExit();
                System.load(file.toAbsolutePath().toString());
            }
        } catch (IOException e) {
            UnsatisfiedLinkError u = new UnsatisfiedLinkError(
                    "polygpu: could not extract the native library from the jar to a temporary "
                            + "folder: " + e.getMessage() + " (check java.io.tmpdir)");
            u.initCause(e);
            throw u;
        }
    }

    /** e.g. "linux-amd64", the folder name the build uses. */
    static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT).replace(' ', '_');
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        return os + "-" + arch;
    }

    /** The lines of the jar's list {@code dir + list}; none when it has no such list. */
    private static List<String> bundled(String dir, String list) {
        List<String> libs = new ArrayList<>();
        try (InputStream in = NativeLoader.class.getResourceAsStream(dir + list)) {
            if (in == null)
                return libs;
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                line = line.trim();
                if (!line.isEmpty())
                    libs.add(line);
            }
        } catch (IOException e) {
            return libs;
        }
        return libs;
    }
}
