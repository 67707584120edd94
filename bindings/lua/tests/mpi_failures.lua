-- mpi_failures.lua CASE: a rank that fails ends the job (run by mpirun with 2 ranks through
-- tests/c/ranks_fail_check.sh: a nonzero status and the messages; CTest's TIMEOUT fails a hang).
--   raise     rank 1 raises an error in the runtime's <close> scope while rank 0 waits for its
--             value: the scope's close ends every rank, naming the error
--   toplevel  the same without <close>: the interpreter frees the runtime as it exits, and
--             rank 0, waiting, learns it from the close
local pg = require "polygpu"
local case = arg[1]
if case == "toplevel" then
    local rt = pg.runtime {devices = "host:1", ranks = "mpi"}
    local a = rt:array("float32", 16, {owner = 1})
    a[1] = 5
    if rt:ranks() == 1 then
        error("rank 1 fails outside a <close> scope")
    end
    print(a[1])
    return
end
do
    local rt <close> = pg.runtime {devices = "host:1", ranks = "mpi"}
    local a = rt:array("float32", 16, {owner = 1})
    a[1] = 5
    if rt:ranks() == 1 then
        error("rank 1 fails on purpose")
    end
    print(a[1])
end
