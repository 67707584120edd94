package polygpu;

/**
 * A call the runtime's state does not allow: for example releasing a host view that was never
 * taken, or freeing an array that is still mapped ({@code PG_ERROR_STATE}). Calls on handles closed
 * from Java throw {@link IllegalStateException} instead, before reaching the runtime.
 */
public class StateException extends PolygpuException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception with the runtime's message and status name.
     *
     * @param message what was wrong and what to do
     * @param status the symbolic status, e.g. {@code "PG_ERROR_STATE"}
     */
    public StateException(String message, String status) {
        super(message, status);
    }

    /**
     * Creates the exception for an error found by the binding itself, before any native call.
     *
     * @param message what was wrong and what to do
     */
    public StateException(String message) {
        super(message, "PG_ERROR_STATE");
    }
}
