package polygpu;

import java.util.Arrays;
import java.util.OptionalDouble;

/**
 * What the tiled GEMM's model chose and predicted ({@link Linalg#gemm(DeviceArray, DeviceArray,
 * DeviceArray, GemmOptions)}): the devices that compute tiles, the tile height, the number of
 * tiles, the rows of C per device, the predicted time and energy.
 */
public final class GemmReport {
    private final int[] devices;
    private final long[] rows;
    private final double[] gflops;
    private final long tile, tiles;
    private final double seconds, joules;
    private final boolean fromModels;

    /** From jni_linalg.c's layout: 7 head values, rows per device, rates per device. */
    GemmReport(double[] v, int maxDevices) {
        long mask = (long) v[0];
        int n = (int) v[1];
        devices = new int[n];
        rows = new long[n];
        gflops = new double[n];
        for (int d = 0, i = 0; d < maxDevices && i < n; d++)
            if ((mask >> d & 1) != 0) {
                devices[i] = d;
                rows[i] = (long) v[7 + d];
                gflops[i] = v[7 + maxDevices + d];
                i++;
            }
        tile = (long) v[2];
        tiles = (long) v[3];
        seconds = v[4];
        joules = v[5];
        fromModels = v[6] != 0;
    }

    /**
     * The devices that compute tiles, ascending.
     *
     * @return device ids
     */
    public int[] devices() {
        return devices.clone();
    }

    /**
     * Rows of C each device of {@link #devices()} computes.
     *
     * @return rows per device
     */
    public long[] rows() {
        return rows.clone();
    }

    /**
     * The GEMM rate the model used per device of {@link #devices()}, in GFLOP/s (0 where the
     * performance models gave tile durations instead).
     *
     * @return rates
     */
    public double[] gflops() {
        return gflops.clone();
    }

    /**
     * Rows of C per tile (the last may have fewer).
     *
     * @return the tile height
     */
    public long tile() {
        return tile;
    }

    /**
     * Tile tasks issued.
     *
     * @return the number of tiles
     */
    public long tiles() {
        return tiles;
    }

    /**
     * The predicted time of the whole GEMM.
     *
     * @return seconds
     */
    public double predictedSeconds() {
        return seconds;
    }

    /**
     * The predicted energy, when the devices' power is known.
     *
     * @return joules, or empty
     */
    public OptionalDouble predictedJoules() {
        return joules < 0 ? OptionalDouble.empty() : OptionalDouble.of(joules);
    }

    /**
     * Whether tile durations came from the performance models.
     *
     * @return true when they did
     */
    public boolean fromModels() {
        return fromModels;
    }

    @Override
    public String toString() {
        return "GemmReport[devices=" + Arrays.toString(devices) + ", rows=" + Arrays.toString(rows)
                + ", tile=" + tile + ", tiles=" + tiles + ", predicted " + seconds + " s]";
    }
}
