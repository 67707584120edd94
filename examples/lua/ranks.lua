-- ranks.lua: the same script on one process or on several (MPI ranks), same results.
--   LUA_CPATH='build/bindings/lua/?.so' lua5.4 examples/lua/ranks.lua
--   mpirun --oversubscribe -np 3 -x LUA_CPATH='build/bindings/lua/?.so' lua5.4 examples/lua/ranks.lua
-- (--oversubscribe: more ranks than cores; as root Open MPI also wants --allow-run-as-root.)
-- Every rank runs the whole script: split spreads x's views over the ranks in blocks, each
-- launch runs on the rank owning what it writes, the second kernel reads x's next row too (polygpu
-- sends each rank the rows it lacks), and reading y gives every rank the whole result.
local pg = require "polygpu"

local SRC = [[
extern "C" __global__ void ramp(float *x, int lo, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = (float)((lo + i) % 97); }
extern "C" __global__ void neighbours(float *y, const float *x, int lo, int n, int total) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[lo + i] + 2.0f * x[(lo + i + 1) % total]; }
]]

local rt = pg.runtime {devices = os.getenv("PG_DEVICES") or "auto"}
local rank, nranks = rt:ranks()
local n, parts = 1 << 14, 6
local ramp, neighbours = rt:kernel(SRC, "ramp"), rt:kernel(SRC, "neighbours")
local x, y = rt:array("float32", n), rt:array("float32", n)
local xs, ys = x:split(parts), y:split(parts) -- on N ranks: blocks of views per rank
local los, lo = {}, 0
for p = 1, parts do
    los[p] = lo
    local rows = #xs[p]
    ramp((rows + 255) // 256, 256)(xs[p], lo, rows) -- runs on xs[p]'s owner only
    lo = lo + rows
end
for p = 1, parts do
    local rows = #ys[p]
    neighbours((rows + 255) // 256, 256)(ys[p], x, los[p], rows, n)
end

local values = y:to_table() -- a host read: every rank gets the whole result
local sum = 0
for i = 1, n do -- Lua counts from 1; the kernels see 0 .. n-1
    local want = (i - 1) % 97 + 2 * (i % n % 97)
    assert(values[i] == want, ("rank %d: y[%d] = %g, want %g"):format(rank, i, values[i], want))
    sum = sum + values[i]
end
if rank == 0 then
    local s = rt:stats()
    print(("%d rank(s): checksum %.1f; rank 0 sent %d and received %d messages"):format(nranks,
        sum, s.rank_messages_sent, s.rank_messages_received))
end
rt:close()
