-- test_mixed.lua: GPUs and CPU devices in one runtime from Lua (simulated GPUs beside host:2):
-- each device's class and backend, values carried between the classes both ways, where= in the
-- kernel's options table keeping each kernel to its class under every policy, and where="gpu"
-- without a GPU failing at creation, naming the devices there are.
local T = require "support"

local MIXED = "sim:h200x2-nv18,host_time=0,host:2"
local SRC = [[
extern "C" __global__ void fill(float *y, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = v; }
extern "C" __global__ void add1(float *y, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] + 1.0f; }
]]
local N = 1024

local function kernel_devices(rt, name)
    local list = {}
    for _, v in ipairs(rt:dag().vertices) do
        if v.kind == "kernel" and v.name == name then list[#list + 1] = v.device end
    end
    return list
end

return {
    {"devices say their class and backend", function()
        local rt = T.runtime {devices = MIXED}
        local d = rt:devices()
        T.eq(#d, 4, "devices")
        T.eq(d[1].class .. d[2].class .. d[3].class .. d[4].class, "gpugpucpucpu", "classes")
        T.eq(d[1].backend .. "," .. d[4].backend, "sim,host", "backends")
        rt:close()
    end},
    {"values cross the classes both ways", function()
        local rt = T.runtime {devices = MIXED, policy = "round-robin"}
        local fill = rt:kernel(SRC, "fill", {where = "cpu"})
        local on_gpu = rt:kernel(SRC, "add1", nil, nil, {where = "gpu"})
        local on_cpu = rt:kernel(SRC, "add1", {where = "cpu", options = "-O2"})
        local a, b, c = rt:array("float32", N), rt:array("float32", N), rt:array("float32", N)
        fill(N // 256, 256)(a, 2.0, N)
        on_gpu(N // 256, 256)(b, a, N)
        on_cpu(N // 256, 256)(c, b, N)
        T.all(c, function() return 4.0 end, "c")
        local adds = kernel_devices(rt, "add1")
        T.truthy(adds[1] < 2 and adds[2] >= 2, "add1 on a GPU, then on a CPU device")
        T.truthy(kernel_devices(rt, "fill")[1] >= 2, "fill on a CPU device")
        rt:close()
    end},
    {"where holds under every policy", function()
        for _, policy in ipairs {"earliest-finish", "round-robin", "stream-aware",
                                 "min-transfer-size", "minmax-transfer-time",
                                 "min-transfer-time", "min-finish-time"} do
            local rt = T.runtime {devices = MIXED, policy = policy}
            local x = rt:array("float32", N)
            rt:kernel(SRC, "fill")(N // 256, 256)(x, 1.5, N)
            for _, w in ipairs {"gpu", "cpu"} do
                local k = rt:kernel(SRC, "add1", {where = w})
                local before = #kernel_devices(rt, "add1")
                local ys = {}
                for i = 1, 6 do
                    ys[i] = rt:array("float32", N)
                    k(N // 256, 256)(ys[i], x, N)
                end
                for i = 1, 6 do T.all(ys[i], function() return 2.5 end, "y") end
                local devs = kernel_devices(rt, "add1")
                for i = before + 1, #devs do
                    T.truthy((w == "gpu") == (devs[i] < 2),
                             policy .. ": where=" .. w .. " ran on device " .. devs[i])
                end
            end
            rt:close()
        end
    end},
    {"where=gpu without a GPU names the devices", function()
        local rt = T.runtime {devices = "host:2"}
        T.raises(function() rt:kernel(SRC, "fill", {where = "gpu"}) end,
                 "no GPU; its devices are 0 (CPU device")
        T.raises(function() rt:kernel(SRC, "fill", {where = "tpu"}) end, "expected any, gpu or cpu")
        T.raises(function() rt:kernel(SRC, "fill", {wehre = "cpu"}) end, "unknown key 'wehre'")
        local y = rt:array("float32", N)
        rt:kernel(SRC, "fill", {where = "cpu"})(N // 256, 256)(y, 7.0, N) -- still usable
        T.all(y, function() return 7.0 end, "y")
        rt:close()
    end},
}
