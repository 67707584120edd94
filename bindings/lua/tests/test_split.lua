-- test_split.lua: one launch over every device from Lua — a kernel whose signature says what
-- each thread block touches runs as one part per device with the serial result; k:split(mode)
-- and the runtime's option split say whether; errors name what is wrong.
local T = require "support"

local SRC = [[
extern "C" __global__ void saxpy(float *y, const float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }
]]
local SIG = "inout(chunks=blocks) float *y, in(chunks=blocks) const float *x, float a, int n"
local N = 4096

local function devices(rt)
    local seen, list = {}, {}
    for _, v in ipairs(rt:dag().vertices) do
        if v.kind == "kernel" and v.name == "saxpy" and not seen[v.device] then
            seen[v.device] = true
            list[#list + 1] = v.device
        end
    end
    table.sort(list)
    return table.concat(list, ",")
end

return {
    {"one launch runs on every device with the serial values", function()
        local rt = T.runtime {devices = "host:4"}
        local k = rt:kernel(SRC, "saxpy", SIG)
        local x, y = rt:array("float32", N), rt:array("float32", N)
        for i = 1, N do x[i] = i - 1; y[i] = 1 end
        k(N // 256, 256)(y, x, 2.0, N)
        T.all(y, function(i) return 2.0 * (i - 1) + 1.0 end, "y") -- 1-based
        T.eq(devices(rt), "0,1,2,3", "devices of the parts")
        rt:close()
    end},
    {"split modes: the option, per kernel, and errors", function()
        local rt = T.runtime {devices = "host:2", split = "off"}
        local k = rt:kernel(SRC, "saxpy", SIG)
        local x, y = rt:array("float32", N), rt:array("float32", N)
        k(N // 256, 256)(y, x, 1.0, N)
        rt:sync()
        T.eq(devices(rt), "0", "split off: one device")
        T.eq(k:split("on"), k, "split returns the kernel")
        k(N // 256, 256)(y, x, 1.0, N)
        rt:sync()
        T.eq(devices(rt), "0,1", "split on")
        T.raises(function() rt:kernel(SRC, "saxpy"):split("on") end, "parameter 1")
        T.raises(function() k:split("sometimes") end, "expected auto, on, off")
        rt:close()
    end},
}
