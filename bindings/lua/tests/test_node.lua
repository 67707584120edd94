-- test_node.lua: polygpu.node_status() (issue 39): a runtime sharing the node (share = "node")
-- is a client with its pid, language "lua" and devices; one with share = "off" is not.
local T = require "support"

local function pid()
    local f = assert(io.open("/proc/self/stat"))
    local p = tonumber(f:read("l"):match("^(%d+)"))
    f:close()
    return p
end

local function mine(s)
    for _, c in ipairs(s.clients) do
        if c.pid == pid() then return c end
    end
end

return {
    {"a sharing runtime is a client of the node", function()
        local rt = T.pg.runtime {devices = "host:2", share = "node"}
        local k = rt:kernel([[
extern "C" __global__ void fill(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 2.0f; }]], "fill")
        local y = rt:array("float32", 1024)
        k(4, 256)(y, 1024)
        rt:sync()
        local s = T.pg.node_status()
        local c = mine(s)
        T.truthy(c ~= nil, "this process is a client")
        T.eq(c.language, "lua", "language")
        T.eq(table.concat(c.devices, ","), "host:0,host:1", "devices")
        T.eq(c.bytes, 4096, "bytes")
        T.eq(c.inflight, 0, "inflight after a sync")
        local seen = false
        for _, d in ipairs(s.devices) do
            T.truthy(d.device and d.inflight and d.bytes and d.clients, "device keys")
            for _, p in ipairs(d.clients) do seen = seen or p == pid() end
        end
        T.truthy(seen, "listed as a client of a device")
        rt:close()
        T.truthy(mine(T.pg.node_status()) == nil, "gone after close")
    end},
    {"share = off is not a client; a bad value is refused", function()
        local rt = T.pg.runtime {devices = "host:1", share = "off"}
        T.truthy(mine(T.pg.node_status()) == nil, "not a client")
        rt:close()
        T.raises(function() T.pg.runtime {devices = "host:1", share = "nodes"} end,
                 "unknown share 'nodes'")
    end},
}
