package polygpu;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.OptionalDouble;

/**
 * The devices a power budget lets a runtime use ({@link Runtime#powerChoice()}), chosen when it
 * was created by Czarnul's greedy rule: again and again the device with the best performance per
 * watt whose power still fits in what is left of the budget. Immutable.
 */
public final class PowerChoice {
    private final double limitWatts, usedWatts;
    private final boolean fromModels;
    private final List<Integer> devices;
    private final double[] watts, performance;

    PowerChoice(double[] raw, int maxDevices) {
        limitWatts = raw[0];
        usedWatts = raw[1];
        fromModels = raw[2] != 0;
        int ndevices = (int) raw[3], nchosen = (int) raw[4];
        Integer[] chosen = new Integer[nchosen];
        for (int i = 0; i < nchosen; i++)
            chosen[i] = (int) raw[5 + i];
        devices = Collections.unmodifiableList(Arrays.asList(chosen));
        watts = Arrays.copyOfRange(raw, 5 + maxDevices, 5 + maxDevices + ndevices);
        performance = Arrays.copyOfRange(raw, 5 + 2 * maxDevices, 5 + 2 * maxDevices + ndevices);
    }

    /**
     * The chosen devices, in the order the rule took them (every device, by id, without a
     * budget).
     *
     * @return device ids
     */
    public List<Integer> devices() {
        return devices;
    }

    /**
     * The budget.
     *
     * @return watts per node, or empty when there is none
     */
    public OptionalDouble limitWatts() {
        return limitWatts > 0 ? OptionalDouble.of(limitWatts) : OptionalDouble.empty();
    }

    /**
     * The chosen devices' power together.
     *
     * @return watts
     */
    public double usedWatts() {
        return usedWatts;
    }

    /**
     * Where the performance figures come from.
     *
     * @return true: the performance models (some kernel and size predicted on every device);
     *     false: nominal throughput (GPUs: SMs x clock; CPU devices: worker threads)
     */
    public boolean fromModels() {
        return fromModels;
    }

    /**
     * The power a device was counted with.
     *
     * @param device a device id
     * @return watts, or empty when unknown
     * @throws IndexOutOfBoundsException if there is no such device
     */
    public OptionalDouble watts(int device) {
        return watts[device] > 0 ? OptionalDouble.of(watts[device]) : OptionalDouble.empty();
    }

    /**
     * A device's performance figure (comparable between the runtime's devices only).
     *
     * @param device a device id
     * @return the figure
     * @throws IndexOutOfBoundsException if there is no such device
     */
    public double performance(int device) {
        return performance[device];
    }

    /**
     * The choice as text.
     *
     * @return a one-line summary
     */
    @Override
    public String toString() {
        return "PowerChoice{devices=" + devices + ", limitWatts=" + limitWatts + ", usedWatts="
                + usedWatts + ", fromModels=" + fromModels + "}";
    }
}
