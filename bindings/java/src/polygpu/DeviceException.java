package polygpu;

/**
 * A device, driver or library failed or is missing ({@code PG_ERROR_DEVICE}), or the chosen devices
 * cannot do a valid request ({@code PG_ERROR_UNSUPPORTED}).
 */
public class DeviceException extends PolygpuException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception with the runtime's message and status name.
     *
     * @param message what was wrong and what to do
     * @param status the symbolic status, e.g. {@code "PG_ERROR_DEVICE"}
     */
    public DeviceException(String message, String status) {
        super(message, status);
    }

    /**
     * Creates the exception for an error found by the binding itself, before any native call.
     *
     * @param message what was wrong and what to do
     */
    public DeviceException(String message) {
        super(message, "PG_ERROR_DEVICE");
    }
}
