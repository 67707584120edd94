-- test_coherence.lua: which copies the runtime makes, seen through rt:stats() and rt:dag().
local T = require "support"

local N = 4096
local NBYTES = N * 4 -- float32
local g, b = T.grid(N)

-- Location indices into stats.link_bytes: the host is 1, device d is d + 2.
local HOST = 1
local function dev(d) return d + 2 end

-- Bytes that arrived at location `to` between two stats snapshots, from anywhere.
local function bytes_into(s0, s1, to)
    local total = 0
    for from = 1, #s1.link_bytes do
        total = total + s1.link_bytes[from][to] - s0.link_bytes[from][to]
    end
    return total
end

local function fresh()
    local rt = T.runtime {policy = "round-robin"}
    return rt, T.kernels(rt)
end

return {
    {"counters add up and start at zero", function()
        local rt, k = fresh()
        local s = rt:stats()
        T.eq(s.kernels, 0, "kernels")
        T.eq(s.copies, 0, "copies")
        T.eq(s.bytes_moved, 0, "bytes_moved")
        T.eq(s.ndevices, #rt:devices(), "ndevices")
        T.eq(#s.link_bytes, s.ndevices + 1, "link_bytes rows")
        T.eq(#s.link_bytes[1], s.ndevices + 1, "link_bytes columns")
        local x, y = rt:array("float32", N), rt:array("float32", N)
        k.fill(g, b)(x, 1.5, N)
        k.add1(g, b)(y, x, N)
        T.eq(y[N], 2.5, "y[N]")
        rt:sync()
        s = rt:stats()
        T.eq(s.kernels, 2, "kernels")
        T.truthy(s.host_accesses >= 1, "the read is a host access")
        T.eq(s.computations, s.kernels + s.host_accesses + s.copies, "computations")
        local sum = 0
        for _, row in ipairs(s.link_bytes) do
            for _, v in ipairs(row) do sum = sum + v end
        end
        T.eq(s.bytes_moved, sum, "bytes_moved is the sum of link_bytes")
        T.eq(s.pending, 0, "nothing pending")
        T.truthy(s.host_wait_ns >= 0, "host_wait_ns")
        rt:close()
    end},

    {"host data goes to the device once, results come back once", function()
        local rt, k = fresh()
        local x, y = rt:array("float32", N), rt:array("float32", N)
        local t = {}
        for i = 1, N do t[i] = i end
        x:from_table(t)
        local m = T.mark(rt)
        local s0 = rt:stats()
        k.add1(g, b)(y, x, N)
        rt:sync()
        local d = T.dag(rt, m):kernel(1).device
        local s1 = rt:stats()
        T.eq(s1.link_bytes[HOST][dev(d)] - s0.link_bytes[HOST][dev(d)] >= NBYTES, true,
            "x copied host -> device")
        T.eq(y[1], 2.0, "y[1]")
        local s2 = rt:stats()
        T.eq(s2.link_bytes[dev(d)][HOST] - s1.link_bytes[dev(d)][HOST], NBYTES,
            "y copied device -> host on the first read")
        T.eq(y[N], N + 1.0, "y[N]")
        T.all(y, function(i) return i + 1.0 end, "y")
        local s3 = rt:stats()
        T.eq(s3.copies, s2.copies, "later reads copy nothing: the host copy is valid")
        T.eq(s3.bytes_moved, s2.bytes_moved, "no bytes moved by later reads")
        rt:close()
    end},

    {"an out argument is not copied in", function()
        local rt = T.runtime {policy = "round-robin"}
        local fill_out = rt:kernel(T.SRC, "fill", "out float *y, float v, int n")
        local y = rt:array("float32", N)
        y:from_table((function() local t = {} for i = 1, N do t[i] = -1 end return t end)())
        local m = T.mark(rt)
        local s0 = rt:stats()
        fill_out(g, b)(y, 7.0, N)
        rt:sync()
        local d = T.dag(rt, m):kernel(1).device
        T.eq(bytes_into(s0, rt:stats(), dev(d)), 0, "bytes into the device for an out argument")
        T.all(y, function() return 7.0 end, "y")
        rt:close()
    end},

    {"a consumer on another device gets one copy, on the same device none", function()
        local rt, k = fresh()
        local x, y = rt:array("float32", N), rt:array("float32", N)
        local m = T.mark(rt)
        k.fill(g, b)(x, 2.0, N)
        rt:sync()
        local s0 = rt:stats()
        k.add1(g, b)(y, x, N)
        rt:sync()
        local s1 = rt:stats()
        local d = T.dag(rt, m)
        local dp, dc = d:kernel(1).device, d:kernel(2).device
        if dp == dc then
            T.eq(bytes_into(s0, s1, dev(dc)), 0, "same device: no copy of x")
        else
            T.truthy(bytes_into(s0, s1, dev(dc)) >= NBYTES, "other device: x copied there")
        end
        T.eq(s1.link_bytes[dev(dp)][HOST] - s0.link_bytes[dev(dp)][HOST], 0,
            "nothing went back to the host")
        T.all(y, function() return 3.0 end, "y")
        rt:close()
    end},

    {"a host write invalidates device copies", function()
        local rt, k = fresh()
        local x, y = rt:array("float32", N), rt:array("float32", N)
        local m = T.mark(rt)
        k.fill(g, b)(x, 1.0, N)
        rt:sync()
        x[1] = 100.0 -- x's current value is now only on the host
        local s0 = rt:stats()
        k.add1(g, b)(y, x, N)
        rt:sync()
        local s1 = rt:stats()
        local dc = T.dag(rt, m):kernel(2).device
        T.truthy(s1.link_bytes[HOST][dev(dc)] - s0.link_bytes[HOST][dev(dc)] >= 4,
            "x copied again from the host")
        T.eq(y[1], 101.0, "y[1] sees the host write")
        T.eq(y[2], 2.0, "y[2]")
        rt:close()
    end},

    {"prefetch copies to the host once, ordered before the next writer", function()
        local rt, k = fresh()
        local y = rt:array("float32", N)
        k.fill(g, b)(y, 4.0, N)
        local s0 = rt:stats()
        y:prefetch()
        rt:sync()
        local s1 = rt:stats()
        T.eq(bytes_into(s0, s1, HOST), NBYTES, "one copy to the host")
        T.all(y, function() return 4.0 end, "y")
        T.eq(rt:stats().bytes_moved, s1.bytes_moved, "the read moved nothing more")
        for v = 1, 5 do
            k.fill(g, b)(y, v, N)
            y:prefetch("host")
            k.fill(g, b)(y, 10 * v, N)
            T.all(y, function() return 10.0 * v end, "y after the second fill")
        end
        local x = rt:array("float32", N)
        x[1] = 1.0
        local last = #rt:devices() - 1
        local s2 = rt:stats()
        x:prefetch(last)
        rt:sync()
        T.eq(bytes_into(s2, rt:stats(), dev(last)), NBYTES, "x copied to the last device")
        T.raises(function() x:prefetch(#rt:devices()) end, "location")
        T.raises(function() x:prefetch("gpu") end, "prefetch", "host")
        T.eq(x[1], 1.0, "x unchanged")
        rt:close()
    end},
}
