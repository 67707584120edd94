-- test_elide.lua: the elide_copies limit study from Lua: copies are skipped, the values are
-- wrong, and rt:stats() says so (copies_elided, bytes_elided); off by default.
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
    {"off by default", function()
        local v, s = run {devices = "host:2"}
        T.eq(v, 2.0, "value")
        T.eq(s.copies_elided, 0, "copies_elided")
        T.eq(s.evictions, 0, "evictions")
    end},
}
