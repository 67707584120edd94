-- quickstart.lua: polygpu from Lua: two independent kernels, one that depends on both, a host
-- read; prints the devices used and the DAG the runtime inferred.
--   LUA_CPATH='build/bindings/lua/?.so' lua5.4 examples/lua/quickstart.lua
local pg = require "polygpu"

local SRC = [[
extern "C" __global__ void square(float *y, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] * x[i]; }
extern "C" __global__ void diff(float *z, const float *a, const float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) z[i] = a[i] - b[i]; }
]]

-- GPUs if there are any, else four CPU devices with separate memories (PG_DEVICES overrides).
local ok, rt = pcall(pg.runtime, {devices = os.getenv("PG_DEVICES") or "cuda"})
if not ok then
    print("no GPU here: using 4 CPU devices")
    rt = pg.runtime {devices = "host:4"}
end
for _, d in ipairs(rt:devices()) do
    print(("device %d: %s"):format(d.id, d.name))
end

local n = 1 << 20
local x1, x2 = rt:array("float32", n), rt:array("float32", n)
local y1, y2, z = rt:array("float32", n), rt:array("float32", n), rt:array("float32", n)
local t1, t2 = {}, {}
for i = 1, n do -- Lua counts from 1; the kernels see indices 0 .. n-1
    t1[i], t2[i] = (i - 1) % 100, (i - 1) % 10
end
x1:from_table(t1)
x2:from_table(t2)

local square, diff = rt:kernel(SRC, "square"), rt:kernel(SRC, "diff")
local grid, block = (n + 255) // 256, 256
square(grid, block)(y1, x1, n) -- independent of ...
square(grid, block)(y2, x2, n) -- ... this one
diff(grid, block)(z, y1, y2, n) -- waits for both

-- Blocks only until diff is done. z[12] is the kernels' element 11: 11*11 - 1*1.
print(("z[12..15] = %g %g %g %g (expected 120 140 160 180)"):format(z[12], z[13], z[14], z[15]))
assert(z[12] == 120 and z[15] == 180, "unexpected result")

local s = rt:stats()
print(("%d kernels, %d copies, %.1f MB moved"):format(s.kernels, s.copies, s.bytes_moved / 1e6))

-- The DAG as a Lua table: kernels, the copies coherence needed, host reads and writes.
local dag = rt:dag()
for _, v in ipairs(dag.vertices) do
    local where = v.device < 0 and "host" or ("device %d, stream %d"):format(v.device, v.stream)
    print(("#%-3d %-10s %-20s %s"):format(v.id, v.kind, v.name, where))
end
local edges = {}
for _, e in ipairs(dag.edges) do
    edges[#edges + 1] = e[1] .. "->" .. e[2]
end
print("edges: " .. table.concat(edges, " "))
rt:close()
