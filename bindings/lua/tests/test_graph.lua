-- test_graph.lua: rt:record(fn) records fn's kernel calls once (nothing runs); g() replays them.
local T = require "support"

local N = 1000
local g1, b1 = T.grid(N)

local function setup()
    local rt = T.runtime {}
    local k = T.kernels(rt)
    return rt, k, rt:array("float32", N), rt:array("float32", N)
end

return {
    {"recording runs nothing; each replay equals the calls made then", function()
        local rt, k, x, y = setup()
        local g = rt:record(function()
            k.add1(g1, b1)(y, x, N)
            k.scale(g1, b1)(y, 2.0, N)
        end)
        T.eq(g:calls(), 2, "calls")
        T.eq(y[6], 0.0, "nothing ran")
        for r = 0, 2 do
            x[6] = 10.0 * r
            g()
            T.eq(y[6], (10.0 * r + 1) * 2, "replay " .. r)
        end
        -- The first replay makes the calls (and keeps them as the graph's plan); the later
        -- ones, finding x where the plan reads it, issue the plan: one vertex each.
        local kernels = {}
        for _, v in ipairs(rt:dag().vertices) do
            if v.kind == "kernel" then kernels[#kernels + 1] = v.name end
        end
        T.eq(table.concat(kernels, ","), "add1,scale,graph replay (2 calls),graph replay (2 calls)",
             "kernel vertices")
        g:free()
        T.raises(function() g() end, "freed")
        rt:close()
    end},

    {"host access, sync and other runtimes are refused inside", function()
        local rt, k, x, y = setup()
        local other = T.runtime {devices = "host:1"}
        local o = other:array("float32", 4)
        local g = rt:record(function()
            k.add1(g1, b1)(y, x, N)
            T.raises(function() return y[1] end, "array", "records a graph")
            T.raises(function() rt:sync() end, "records a graph")
            T.raises(function() return o[1] end, "another runtime")
        end)
        T.eq(o[1], 0.0, "the recording is over")
        g()
        T.eq(y[1], 1.0, "replayed")
        other:close()
        rt:close()
    end},

    {"an error in the function drops the recording and is raised", function()
        local rt, k, x, y = setup()
        T.raises(function()
            rt:record(function()
                k.add1(g1, b1)(y, x, N)
                error("boom")
            end)
        end, "boom")
        k.add1(g1, b1)(y, x, N) -- recording is over: this runs
        T.eq(y[1], 1.0, "eager after a failed recording")
        rt:close()
    end},

    {"a replay after a recorded array was freed is refused", function()
        local rt, k, x, y = setup()
        local g = rt:record(function() k.add1(g1, b1)(y, x, N) end)
        y:free()
        T.raises(function() g() end, "freed after it was recorded")
        rt:close()
        T.raises(function() g() end, "closed")
    end},
}
