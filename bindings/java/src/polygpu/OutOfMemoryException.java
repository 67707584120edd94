package polygpu;

/**
 * Host or device memory is exhausted ({@code PG_ERROR_OUT_OF_MEMORY}).
 */
public class OutOfMemoryException extends PolygpuException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception with the runtime's message and status name.
     *
     * @param message what was wrong and what to do
     * @param status the symbolic status, e.g. {@code "PG_ERROR_OUT_OF_MEMORY"}
     */
    public OutOfMemoryException(String message, String status) {
        super(message, status);
    }

    /**
     * Creates the exception for an error found by the binding itself, before any native call.
     *
     * @param message what was wrong and what to do
     */
    public OutOfMemoryException(String message) {
        super(message, "PG_ERROR_OUT_OF_MEMORY");
    }
}
