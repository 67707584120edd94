package polygpu;

/**
 * Element types of a {@link DeviceArray}, in the order of the C enum {@code pg_dtype}. Java has
 * no unsigned types: the unsigned ones are read and written through the Java type of the same
 * width ({@code UINT8} through {@code byte}, {@code UINT32} through {@code int}, ...).
 */
public enum DType {
    /** Signed 8-bit integer, Java {@code byte}. */
    INT8(1, "int8"),
    /** Signed 16-bit integer, Java {@code short}. */
    INT16(2, "int16"),
    /** Signed 32-bit integer, Java {@code int}. */
    INT32(4, "int32"),
    /** Signed 64-bit integer, Java {@code long}. */
    INT64(8, "int64"),
    /** Unsigned 8-bit integer, accessed as Java {@code byte}. */
    UINT8(1, "uint8"),
    /** Unsigned 16-bit integer, accessed as Java {@code short}. */
    UINT16(2, "uint16"),
    /** Unsigned 32-bit integer, accessed as Java {@code int}. */
    UINT32(4, "uint32"),
    /** Unsigned 64-bit integer, accessed as Java {@code long}. */
    UINT64(8, "uint64"),
    /** IEEE 754 single precision, Java {@code float}. */
    FLOAT32(4, "float32"),
    /** IEEE 754 double precision, Java {@code double}. */
    FLOAT64(8, "float64");

    private final int size;
    private final String typeName;

    DType(int size, String typeName) {
        this.size = size;
        this.typeName = typeName;
    }

    /**
     * Bytes per element.
     *
     * @return 1, 2, 4 or 8
     */
    public int size() {
        return size;
    }

    /**
     * The runtime's name of the type, as accepted by {@link #parse(String)}.
     *
     * @return e.g. {@code "float32"}
     */
    public String typeName() {
        return typeName;
    }

    /**
     * The runtime's name of the type.
     *
     * @return the same as {@link #typeName()}
     */
    @Override
    public String toString() {
        return typeName;
    }

    /**
     * The type named {@code name} in the runtime's vocabulary ({@code "int8"} .. {@code "uint64"},
     * {@code "float32"}, {@code "float64"}).
     *
     * @param name a type name
     * @return the type
     * @throws ArgumentException if no type has that name
     */
    public static DType parse(String name) {
        if (name == null)
            throw new ArgumentException("dtype must not be null: use a name such as \"float32\"");
        return values()[Native.dtypeParse(Native.cstr(name, "dtype"))];
    }

    /** The code of the C enum {@code pg_dtype}. */
    int code() {
        return ordinal();
    }
}
