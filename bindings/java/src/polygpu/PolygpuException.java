package polygpu;

/**
 * Base class of every error polygpu reports. Each failing native call maps its status to one
 * subclass; the message is the runtime's own description of what was wrong and what to do.
 * Statuses without a subclass of their own ({@code PG_ERROR_IO}, {@code PG_ERROR_INTERNAL}) are
 * thrown as this class.
 */
public class PolygpuException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The symbolic status name, e.g. {@code "PG_ERROR_ARGUMENT"}. */
    private final String status;

    /**
     * Creates an exception with the runtime's message and status name.
     *
     * @param message what was wrong and what to do
     * @param status the symbolic status, e.g. {@code "PG_ERROR_IO"}
     */
    public PolygpuException(String message, String status) {
        super(message);
        this.status = status;
    }

    /**
     * The symbolic name of the status the native call returned.
     *
     * @return e.g. {@code "PG_ERROR_ARGUMENT"}
     */
    public String getStatus() {
        return status;
    }
}
