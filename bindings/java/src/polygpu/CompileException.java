package polygpu;

/**
 * Kernel source did not compile ({@code PG_ERROR_COMPILE}); {@link #getLog()} holds the
 * compiler's output.
 */
public class CompileException extends PolygpuException {
    private static final long serialVersionUID = 1L;

    /** The compiler's log. */
    private final String log;

    /**
     * Creates the exception with the runtime's message, status name and compiler log.
     *
     * @param message what failed to compile
     * @param status the symbolic status, {@code "PG_ERROR_COMPILE"}
     * @param log the compiler's output ({@code ""} if none)
     */
    public CompileException(String message, String status, String log) {
        super(message, status);
        this.log = log == null ? "" : log;
    }

    /**
     * The compiler's output: errors with line numbers in the kernel source.
     *
     * @return the log, never {@code null}
     */
    public String getLog() {
        return log;
    }
}
