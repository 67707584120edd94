package polygpu;

/**
 * A wait with a time limit ({@link Runtime#sync(long, java.util.concurrent.TimeUnit)}) ran out
 * ({@code PG_ERROR_TIMEOUT}); the work goes on, nothing was cancelled.
 */
public class WaitTimeoutException extends PolygpuException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception with the runtime's message and status name.
     *
     * @param message what happened
     * @param status the symbolic status, {@code "PG_ERROR_TIMEOUT"}
     */
    public WaitTimeoutException(String message, String status) {
        super(message, status);
    }
}
