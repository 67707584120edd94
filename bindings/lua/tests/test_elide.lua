-- test_elide.lua: the elide_copies limit study from Lua: copies are skipped, the values are
-- wrong, and rt:stats() says so (copies_elided, bytes_elided); off by default. And rt:clock(),
-- the clock a script times itself by (virtual on simulated devices).
local T = require "support"

local N = 100
local g, b = T.grid(N)

local function run(opts)
    local rt = T.runtime(opts)
    local k = T.kernels(rt)
    local x, y = rt:array("float32", N), rt:array("float32", N)
    local ones = {}
    for i = 1, N do ones[i] = 1.0 end
    x:from_table(ones)
    k.add1(g, b)(y, x, N)
    local v = y[6]
    local s = rt:stats()
    rt:close()
    return v, s
end

return {
    {"elided copies leave the values wrong and are counted", function()
        local v, s = run {devices = "host:2", elide_copies = "1"}
        T.eq(v, 0.0, "x never reached the device, y never came back")
        T.eq(s.copies_elided, 2, "copies_elided")
        T.eq(s.bytes_elided, 2 * N * 4, "bytes_elided")
        T.eq(s.copies, 2, "counted as if made")
    end},
    {"rt:clock() is the simulated machine's virtual time on sim: devices", function()
        local function chain()
            local rt = T.runtime {devices = "sim:h200x1,host_time=0"}
            local k = T.kernels(rt)
            local x, y = rt:array("float32", 1 << 20), rt:array("float32", 1 << 20)
            rt:sync()
            local t0 = rt:clock()
            for i = 1, 10 do k.add1(T.grid(1 << 20))(i % 2 == 0 and x or y, i % 2 == 0 and y or x, 1 << 20) end
            rt:sync()
            local d = rt:clock() - t0
            rt:close()
            return d
        end
        local a, b = chain(), chain()
        T.eq(a, b, "the same work takes the same virtual time")
        T.truthy(a > 0 and a < 0.01, "ten kernels take some virtual microseconds: " .. a)
        local rt = T.runtime {devices = "host:1"}
        local c0 = rt:clock()
        T.truthy(rt:clock() >= c0, "real time never goes back")
        rt:close()
    end},
    {"off by default", function()
        local v, s = run {devices = "host:2"}
        T.eq(v, 2.0, "value")
        T.eq(s.copies_elided, 0, "copies_elided")
        T.eq(s.evictions, 0, "evictions")
    end},
}
