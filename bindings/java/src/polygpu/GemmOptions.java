package polygpu;

import java.util.Arrays;

/**
 * Options of {@link Linalg#gemm(DeviceArray, DeviceArray, DeviceArray, GemmOptions)}, set
 * fluently: {@code new GemmOptions().beta(1).devices(0, 1).tile(4096)}. Defaults: alpha 1, beta
 * 0, no transposes, every device, the model's tile, metric {@link Metric#PERF}.
 */
public final class GemmOptions {
    /** What the model minimizes. */
    public enum Metric {
        /** Predicted time. */
        PERF,
        /** Predicted energy times time (needs each device's power, read through NVML). */
        EDP
    }

    double alpha = 1.0, beta = 0.0;
    boolean transA, transB;
    int[] devices;
    long tile;
    Metric metric = Metric.PERF;

    /** Options with the defaults. */
    public GemmOptions() {}

    /**
     * The product's factor.
     *
     * @param v alpha
     * @return these options
     */
    public GemmOptions alpha(double v) {
        alpha = v;
        return this;
    }

    /**
     * C's factor (0: C's old value is not read).
     *
     * @param v beta
     * @return these options
     */
    public GemmOptions beta(double v) {
        beta = v;
        return this;
    }

    /**
     * Whether a is used transposed (stored k x m).
     *
     * @param v transA
     * @return these options
     */
    public GemmOptions transA(boolean v) {
        transA = v;
        return this;
    }

    /**
     * Whether b is used transposed (stored n x k).
     *
     * @param v transB
     * @return these options
     */
    public GemmOptions transB(boolean v) {
        transB = v;
        return this;
    }

    /**
     * The devices that may compute tiles (the model may use fewer); none given: every device.
     *
     * @param ids device ids (0-based, as {@link Runtime#devices()})
     * @return these options
     */
    public GemmOptions devices(int... ids) {
        devices = ids == null ? null : Arrays.copyOf(ids, ids.length);
        return this;
    }

    /**
     * Rows of C per tile (0: the model's choice). At most 32 tiles.
     *
     * @param rows the tile height
     * @return these options
     */
    public GemmOptions tile(long rows) {
        tile = rows;
        return this;
    }

    /**
     * What the model minimizes.
     *
     * @param m the metric (not null)
     * @return these options
     */
    public GemmOptions metric(Metric m) {
        if (m == null)
            throw new ArgumentException("gemm: metric must not be null");
        metric = m;
        return this;
    }
}
