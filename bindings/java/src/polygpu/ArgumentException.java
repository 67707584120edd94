package polygpu;

/**
 * A bad value passed by the caller: an unknown dtype, option or policy name, a bad shape, a wrong
 * number or type of kernel arguments, a scalar that does not fit its parameter ({@code
 * PG_ERROR_ARGUMENT}).
 */
public class ArgumentException extends PolygpuException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception with the runtime's message and status name.
     *
     * @param message what was wrong and what to do
     * @param status the symbolic status, e.g. {@code "PG_ERROR_ARGUMENT"}
     */
    public ArgumentException(String message, String status) {
        super(message, status);
    }

    /**
     * Creates the exception for an error found by the binding itself, before any native call.
     *
     * @param message what was wrong and what to do
     */
    public ArgumentException(String message) {
        super(message, "PG_ERROR_ARGUMENT");
    }
}
