-- mpi_ranks_check.lua: the Lua binding on several ranks (run by mpirun; every rank runs it
-- whole): {owner = r} and a:owner()/a:set_owner() pass through, split spreads views over the
-- ranks, rt:ranks() and the counters in rt:stats(), and the core's errors come back as Lua
-- errors with the runtime still usable.
local pg = require "polygpu"
local rt = pg.runtime {devices = os.getenv("PG_DEVICES") or "host:2", ranks = "mpi"}
local rank, nranks = rt:ranks()
assert(nranks == tonumber(os.getenv("OMPI_COMM_WORLD_SIZE")) and rank >= 0 and rank < nranks)
local last = nranks - 1
local SRC = [[
extern "C" __global__ void fill(float *y, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = v; }
extern "C" __global__ void both(float *a, float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) { a[i] = 1; b[i] = 2; } }
]]
local fill, both = rt:kernel(SRC, "fill"), rt:kernel(SRC, "both")
local a = rt:array("float32", 64, {owner = last})
assert(a:owner() == last)
fill(1, 64)(a, 3.0, 64)
assert(a[5] == 3.0) -- a host read on every rank
local s = rt:stats()
assert(s.nranks == nranks and s.rank == rank)
assert(s.rank_messages_sent == (rank == last and nranks - 1 or 0))
local parts = rt:array("float32", 40):split(4)
for i = 1, 4 do
    assert(parts[i]:owner() == (i - 1) * nranks // 4)
end
local c = rt:array("float32", 64)
local ok, err = pcall(function() both(1, 64)(c, a, 64) end)
assert(not ok and tostring(err):find("several owners"), tostring(err))
ok, err = pcall(function() a:set_owner(nranks) end)
assert(not ok and tostring(err):find("rank"), tostring(err))
a:set_owner(0)
fill(1, 64)(a, 5.0, 64)
assert(a[64] == 5.0)
rt:close()
print(("rank %d of %d: ok"):format(rank, nranks))
