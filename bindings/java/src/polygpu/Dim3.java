package polygpu;

/**
 * A CUDA grid or block size: x, y and z, each at least 1. A launch is checked against each
 * device's limits ({@link Device#maxThreadsPerBlock()}, ...) when a kernel is launched.
 */
public final class Dim3 {
    /** Size along x. */
    public final int x;
    /** Size along y. */
    public final int y;
    /** Size along z. */
    public final int z;

    /**
     * A one-dimensional size.
     *
     * @param x size along x, at least 1
     * @throws ArgumentException if x is below 1
     */
    public Dim3(int x) {
        this(x, 1, 1);
    }

    /**
     * A two-dimensional size.
     *
     * @param x size along x, at least 1
     * @param y size along y, at least 1
     * @throws ArgumentException if a size is below 1
     */
    public Dim3(int x, int y) {
        this(x, y, 1);
    }

    /**
     * A three-dimensional size.
     *
     * @param x size along x, at least 1
     * @param y size along y, at least 1
     * @param z size along z, at least 1
     * @throws ArgumentException if a size is below 1
     */
    public Dim3(int x, int y, int z) {
        if (x < 1 || y < 1 || z < 1)
            throw new ArgumentException(
                    "Dim3(" + x + ", " + y + ", " + z + "): every size must be at least 1");
        this.x = x;
        this.y = y;
        this.z = z;
    }

    /**
     * Compares sizes.
     *
     * @param o another object
     * @return true if {@code o} is a Dim3 of the same sizes
     */
    @Override
    public boolean equals(Object o) {
        return o instanceof Dim3 && ((Dim3) o).x == x && ((Dim3) o).y == y && ((Dim3) o).z == z;
    }

    /**
     * A hash of the sizes.
     *
     * @return the hash
     */
    @Override
    public int hashCode() {
        return (x * 31 + y) * 31 + z;
    }

    /**
     * The sizes as text.
     *
     * @return e.g. {@code "(4, 1, 1)"}
     */
    @Override
    public String toString() {
        return "(" + x + ", " + y + ", " + z + ")";
    }
}
