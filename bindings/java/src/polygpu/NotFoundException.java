package polygpu;

/**
 * A named thing does not exist: a kernel name not in the source, a file ({@code
 * PG_ERROR_NOT_FOUND}).
 */
public class NotFoundException extends PolygpuException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception with the runtime's message and status name.
     *
     * @param message what was wrong and what to do
     * @param status the symbolic status, e.g. {@code "PG_ERROR_NOT_FOUND"}
     */
    public NotFoundException(String message, String status) {
        super(message, status);
    }

    /**
     * Creates the exception for an error found by the binding itself, before any native call.
     *
     * @param message what was wrong and what to do
     */
    public NotFoundException(String message) {
        super(message, "PG_ERROR_NOT_FOUND");
    }
}
