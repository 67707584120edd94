package polygpu;

/**
 * How a host view ({@link DeviceArray#asByteBuffer(Access)}) uses an array, as the C enum
 * {@code pg_access}.
 */
public enum Access {
    /** Read only: waits for the last writer; the view is read-only. */
    IN(1),
    /** Every element written, old contents not needed: waits for readers too. */
    OUT(2),
    /** Read and written: waits for the last writer and every reader since. */
    INOUT(3);

    private final int code;

    Access(int code) {
        this.code = code;
    }

    /** The code of the C enum {@code pg_access}. */
    int code() {
        return code;
    }
}
