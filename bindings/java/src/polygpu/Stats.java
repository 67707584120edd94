package polygpu;

import java.util.OptionalDouble;

/**
 * A snapshot of a runtime's counters ({@link Runtime#stats()}). A "location" is 0 for the host
 * and {@code d + 1} for device {@code d}.
 */
public final class Stats {
    private final int ndevices;
    private final long computations, kernels, hostAccesses, copies, bytesMoved, hostWaitNs,
            pending;
    private final long[][] linkBytes;
    private final long evictions, bytesEvicted, writebacks, copiesElided, bytesElided;
    private final double[] energyJoules, powerWatts;
    private final int rank, nranks;
    private final long rankMessagesSent, rankMessagesReceived, rankBytesSent, rankBytesReceived,
            rankCacheHits;

    Stats(long[] raw, int maxLocations) {
        ndevices = (int) raw[0];
        computations = raw[1];
        kernels = raw[2];
        hostAccesses = raw[3];
        copies = raw[4];
        bytesMoved = raw[5];
        hostWaitNs = raw[6];
        pending = raw[7];
        int n = ndevices + 1;
        linkBytes = new long[n][n];
        for (int s = 0; s < n; s++)
            for (int d = 0; d < n; d++)
                linkBytes[s][d] = raw[8 + s * maxLocations + d];
        int tail = 8 + maxLocations * maxLocations;
        evictions = raw[tail];
        bytesEvicted = raw[tail + 1];
        writebacks = raw[tail + 2];
        copiesElided = raw[tail + 3];
        bytesElided = raw[tail + 4];
        int maxDevices = maxLocations - 1;
        energyJoules = new double[ndevices];
        powerWatts = new double[ndevices];
        for (int d = 0; d < ndevices; d++) {
            energyJoules[d] = Double.longBitsToDouble(raw[tail + 5 + d]);
            powerWatts[d] = Double.longBitsToDouble(raw[tail + 5 + maxDevices + d]);
        }
        int r = tail + 5 + 2 * maxDevices;
        rank = (int) raw[r];
        nranks = (int) raw[r + 1];
        rankMessagesSent = raw[r + 2];
        rankMessagesReceived = raw[r + 3];
        rankBytesSent = raw[r + 4];
        rankBytesReceived = raw[r + 5];
        rankCacheHits = raw[r + 6];
    }

    /**
     * This process's rank ({@link Runtime#rank()}); 0 single-process.
     *
     * @return the rank
     */
    public int rank() {
        return rank;
    }

    /**
     * The number of ranks ({@link Runtime#nranks()}); 1 single-process.
     *
     * @return the number of ranks
     */
    public int nranks() {
        return nranks;
    }

    /**
     * Messages this rank sent to other ranks (values they needed).
     *
     * @return the number of messages sent
     */
    public long rankMessagesSent() {
        return rankMessagesSent;
    }

    /**
     * Messages this rank received from other ranks.
     *
     * @return the number of messages received
     */
    public long rankMessagesReceived() {
        return rankMessagesReceived;
    }

    /**
     * Bytes of the values this rank sent.
     *
     * @return the bytes sent
     */
    public long rankBytesSent() {
        return rankBytesSent;
    }

    /**
     * Bytes of the values this rank received.
     *
     * @return the bytes received
     */
    public long rankBytesReceived() {
        return rankBytesReceived;
    }

    /**
     * Reads of another rank's array that found a copy received earlier still current (no
     * message).
     *
     * @return the number of such reads
     */
    public long rankCacheHits() {
        return rankCacheHits;
    }

    /**
     * Energy device {@code device} used since the runtime started: on a GPU, NVML's energy
     * counter; on a device with an injected figure (option {@code power_watts}: CPU devices,
     * GPUs without NVML), those watts times its busy time (the summed durations of the
     * operations it ran; GPUs are timed only with trace or profile).
     *
     * @param device a device id, 0 .. ndevices() - 1
     * @return joules, or empty when unknown
     * @throws IndexOutOfBoundsException if there is no such device
     */
    public OptionalDouble energyJoules(int device) {
        double j = energyJoules[device];
        return j >= 0 ? OptionalDouble.of(j) : OptionalDouble.empty();
    }

    /**
     * Power device {@code device} draws under load, as the power budget counts it: on a GPU the
     * highest power NVML reported while it ran work, else its default power limit; elsewhere the
     * injected figure.
     *
     * @param device a device id, 0 .. ndevices() - 1
     * @return watts, or empty when unknown
     * @throws IndexOutOfBoundsException if there is no such device
     */
    public OptionalDouble powerWatts(int device) {
        double w = powerWatts[device];
        return w > 0 ? OptionalDouble.of(w) : OptionalDouble.empty();
    }

    /**
     * Device copies freed to make room under {@code device_memory_limit}.
     *
     * @return the number of evictions
     */
    public long evictions() {
        return evictions;
    }

    /**
     * Bytes of the evicted copies.
     *
     * @return the bytes evicted
     */
    public long bytesEvicted() {
        return bytesEvicted;
    }

    /**
     * Evictions that held the only current value, copied to the host first.
     *
     * @return the number of write-backs
     */
    public long writebacks() {
        return writebacks;
    }

    /**
     * Copies skipped by the {@code elide_copies} limit study (also counted in {@link #copies()}
     * as if made): non-zero means the arrays' values are wrong and only the timing means
     * something.
     *
     * @return the number of elided copies
     */
    public long copiesElided() {
        return copiesElided;
    }

    /**
     * Bytes of the elided copies.
     *
     * @return the bytes elided
     */
    public long bytesElided() {
        return bytesElided;
    }

    /**
     * Devices of the runtime.
     *
     * @return the number of devices
     */
    public int ndevices() {
        return ndevices;
    }

    /**
     * Computations so far: kernels, host accesses and copies.
     *
     * @return the count
     */
    public long computations() {
        return computations;
    }

    /**
     * Kernel launches so far.
     *
     * @return the count
     */
    public long kernels() {
        return kernels;
    }

    /**
     * Host accesses so far: element reads and writes, bulk copies, host views.
     *
     * @return the count
     */
    public long hostAccesses() {
        return hostAccesses;
    }

    /**
     * Copies between locations the runtime issued to keep arrays coherent.
     *
     * @return the count
     */
    public long copies() {
        return copies;
    }

    /**
     * Bytes moved over every link (the sum of {@link #linkBytes(int, int)}).
     *
     * @return bytes
     */
    public long bytesMoved() {
        return bytesMoved;
    }

    /**
     * Bytes copied from one location to another.
     *
     * @param src source location: 0 host, d + 1 device d
     * @param dst destination location: 0 host, d + 1 device d
     * @return bytes
     * @throws IndexOutOfBoundsException if a location is not 0 .. ndevices()
     */
    public long linkBytes(int src, int dst) {
        return linkBytes[src][dst];
    }

    /**
     * Time host accesses and syncs spent waiting for devices.
     *
     * @return nanoseconds
     */
    public long hostWaitNs() {
        return hostWaitNs;
    }

    /**
     * Computations waiting for a host view ({@link DeviceArray#asByteBuffer()}) to be released.
     *
     * @return the count
     */
    public long pending() {
        return pending;
    }

    /**
     * The counters as text.
     *
     * @return a one-line summary
     */
    @Override
    public String toString() {
        return "Stats{devices=" + ndevices + ", computations=" + computations + ", kernels="
                + kernels + ", hostAccesses=" + hostAccesses + ", copies=" + copies
                + ", bytesMoved=" + bytesMoved + ", hostWaitNs=" + hostWaitNs + ", pending="
                + pending + "}";
    }
}
