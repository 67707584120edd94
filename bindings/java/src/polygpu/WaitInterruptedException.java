package polygpu;

/**
 * A wait (a host read, a view, a sync) ended because the waiting thread was interrupted
 * ({@link Thread#interrupt()}; {@code PG_ERROR_INTERRUPTED}). The work goes on; the thread's
 * interrupt status stays set, as for other calls that cannot throw {@link InterruptedException}.
 */
public class WaitInterruptedException extends PolygpuException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception with the runtime's message and status name.
     *
     * @param message what happened
     * @param status the symbolic status, {@code "PG_ERROR_INTERRUPTED"}
     */
    public WaitInterruptedException(String message, String status) {
        super(message, status);
    }
}
