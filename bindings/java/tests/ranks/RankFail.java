// RankFail.java: an uncaught exception on one of several ranks ends every rank (run by mpirun
// with 2 ranks through tests/c/ranks_fail_check.sh: a nonzero status and the message naming
// the rank and the exception; CTest's TIMEOUT fails a hang). Rank 1 throws while rank 0 waits
// for a value rank 1 owns.
import polygpu.DeviceArray;
import polygpu.Runtime;

public final class RankFail {
    public static void main(String[] args) {
        Runtime rt = new Runtime(new Runtime.Options().devices("host:1"));
        DeviceArray a = rt.array("float32", 16);
        a.setOwner(1);
        a.setFloat(0, 5.0f);
        if (rt.rank() == 1) {
            throw new IllegalStateException("rank 1 fails on purpose");
        }
        System.out.println(a.getFloat(0));
        rt.close();
    }
}
