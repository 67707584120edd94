-- test_slices.lua: views. a:slice(lo, hi) (1-based rows, inclusive) and a:split(n | {rows...})
-- give arrays sharing a's rows: indexing, length, tables and kernels work on them as on any
-- array, writes go through both ways, kernels on disjoint views have no edge and run on two
-- devices, an overlapping view waits for both; rows of 2-D arrays, views of views, the parent
-- freed first, recordings; misuse names the problem and leaves the array usable.
local T = require "support"

-- 1..n as an int32 array.
local function iota(rt, n)
    local a = rt:array("int32", n)
    local t = {}
    for i = 1, n do t[i] = i end
    return a:from_table(t)
end

local function rows_of(views)
    local t = {}
    for i, v in ipairs(views) do t[i] = v:shape()[1] end
    return table.concat(t, ",")
end

local function values(a)
    return table.concat(a:to_table(), ",")
end

return {
    {"a slice is a view of rows lo to hi, 1-based and inclusive", function()
        local rt = T.runtime {}
        local a = iota(rt, 10)
        local v = a:slice(3, 6)
        T.eq(#v, 4, "#v")
        T.eq(v:shape()[1], 4, "shape")
        T.eq(v:dtype(), "int32", "dtype")
        T.eq(v:id(), a:id(), "a view has its array's id")
        T.eq(values(v), "3,4,5,6", "rows 3 to 6")
        T.eq(v[1], 3, "v[1] is a[3]")
        T.eq(v[#v], 6, "v[#v] is a[6]")
        T.eq(getmetatable(v), getmetatable(a), "the same type as arrays")
        T.eq(tostring(v), ("polygpu.array(int32, {4}, view of rows 3 to 6 of array %d)"):format(
            a:id()), "tostring")
        -- Indices are 1-based within the view.
        T.raises(function() return v[0] end, "valid indices are 1 to 4")
        T.raises(function() return v[5] end, "valid indices are 1 to 4")
        T.raises(function() v[5] = 1 end, "valid indices are 1 to 4")
        -- Bounds: the whole array, single rows at either end, hi left out.
        T.eq(values(a:slice(1, 10)), "1,2,3,4,5,6,7,8,9,10", "slice(1, 10)")
        T.eq(values(a:slice(1, 1)), "1", "slice(1, 1)")
        T.eq(values(a:slice(10, 10)), "10", "slice(10, 10)")
        T.eq(values(a:slice(8)), "8,9,10", "slice(8): to the last row")
        rt:close()
    end},

    {"writes go through a view both ways", function()
        local rt = T.runtime {}
        local k = T.kernels(rt)
        local a = rt:array("float32", 100)
        local v = a:slice(11, 20)
        v[1] = -1.0
        T.eq(a[11], -1.0, "v[1] = ... is a[11]")
        a[12] = -2.0
        T.eq(v[2], -2.0, "a[12] = ... is v[2]")
        v:from_table {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
        T.all(a, function(i) return (i >= 11 and i <= 20) and i - 10.0 or 0.0 end, "from_table")
        k.fill(T.grid(10))(v, 7.0, 10) -- a kernel writes the view's 10 rows only
        T.all(a, function(i) return (i >= 11 and i <= 20) and 7.0 or 0.0 end, "kernel on a view")
        k.fill(T.grid(100))(a, 3.0, 100) -- and one on the array is seen through the view
        T.all(v, function() return 3.0 end, "kernel on the array")
        local y = rt:array("float32", 10)
        k.add1(T.grid(10))(y, v, 10) -- a view as an input
        T.all(y, function() return 4.0 end, "a view read by a kernel")
        a:slice(91, 100):copy_from(y) -- copy_from into a view
        T.eq(a[90], 3.0, "a[90] untouched")
        T.eq(a[91], 4.0, "a[91] copied")
        y:copy_from(a:slice(1, 10)) -- and out of one
        T.all(y, function() return 3.0 end, "copy_from a view")
        v:prefetch()
        T.eq(v[10], 3.0, "after prefetch")
        rt:close()
    end},

    {"split(n) gives nearly equal rows, split{...} given rows", function()
        local rt = T.runtime {}
        local a = iota(rt, 10)
        local p = a:split(3)
        T.eq(#p, 3, "#split(3)")
        T.eq(rows_of(p), "4,3,3", "split(3) rows, as numpy.array_split")
        T.eq(values(p[1]) .. "|" .. values(p[2]) .. "|" .. values(p[3]), "1,2,3,4|5,6,7|8,9,10",
            "split(3) values")
        T.eq(rows_of(a:split(4)), "3,3,2,2", "split(4) rows")
        T.eq(rows_of(a:split(1)), "10", "split(1)")
        T.eq(rows_of(a:split(10)), "1,1,1,1,1,1,1,1,1,1", "split(10)")
        local q = a:split {2, 5, 3}
        T.eq(#q, 3, "#split{2, 5, 3}")
        T.eq(values(q[1]) .. "|" .. values(q[2]) .. "|" .. values(q[3]), "1,2|3,4,5,6,7|8,9,10",
            "split{2, 5, 3} values")
        T.eq(rows_of(q[2]:split(2)), "3,2", "a view splits into views of views")
        T.eq(values(q[2]:split(2)[2]), "6,7", "the views of a view are its rows")
        q[3][1] = 80
        T.eq(a[8], 80, "a split view writes through")
        rt:close()
    end},

    {"bad bounds and splits name the problem and leave the array usable", function()
        local rt = T.runtime {}
        local a = iota(rt, 10)
        local cases = {
            {function() return a:split(0) end, "split(0)", "1 to 10"},
            {function() return a:split(11) end, "split(11)", "1 to 10"},
            {function() return a:split {4, 5} end, "split{4, 5}", "add up to 9", "10 rows"},
            {function() return a:split {10, 0} end, "split{10, 0}", "positive"},
            {function() return a:split {5, -1, 6} end, "row count 2", "positive"},
            {function() return a:split {5, 2.5, 2.5} end, "positive"},
            {function() return a:split(2.5) end, "split(2.5)", "integer"},
            {function() return a:split "two" end, "split", "got string"},
            {function() return a:slice(0, 5) end, "slice(0, 5): rows are 1 to 10"},
            {function() return a:slice(5, 4) end, "slice(5, 4)", "lo > hi"},
            {function() return a:slice(1, 11) end, "slice(1, 11): rows are 1 to 10"},
            {function() return a:slice(11) end, "rows are 1 to 10"},
            {function() return a:slice(1.5, 3) end, "lo must be an integer"},
            {function() return a:slice() end, "lo must be an integer"},
        }
        for i, c in ipairs(cases) do
            local err = T.raises(c[1], "polygpu: argument error", table.unpack(c, 2))
            T.truthy(err:find("test_slices.lua", 1, true), "case " .. i .. ": error at the caller")
            T.eq(values(a), "1,2,3,4,5,6,7,8,9,10", "case " .. i .. ": the array is unchanged")
        end
        T.eq(rows_of(a:split(2)), "5,5", "the array still splits")
        a:slice(2, 3)[1] = 20
        T.eq(a[2], 20, "and slices")
        rt:close()
    end},

    {"kernels on disjoint views run apart on two devices; an overlapping one waits", function()
        local N, H = 1024, 512
        local rt = T.runtime {devices = "host:2", policy = "round-robin"}
        local fill = rt:kernel(T.SRC, "fill", "out float *y, float v, int n")
        local x = rt:array("float32", N)
        local lo, hi = table.unpack(x:split(2))
        local mid = x:slice(H // 2 + 1, H + H // 2)
        T.eq(#lo + #hi + #mid, N + H, "sizes")
        local m = T.mark(rt)
        fill(T.grid(H))(lo, 1.0, H)
        fill(T.grid(H))(hi, 2.0, H)
        fill(T.grid(H))(mid, 3.0, H)
        T.all(x, function(i)
            return i <= H // 2 and 1.0 or i <= H + H // 2 and 3.0 or 2.0
        end, "x")
        local d = T.dag(rt, m)
        local a, b, c = d:kernel(1), d:kernel(2), d:kernel(3)
        T.truthy(not d:edge(a, b) and not d:edge(b, a), "no edge between disjoint views")
        T.truthy(d:edge(a, c), "the overlapping view waits for the first half")
        T.truthy(d:edge(b, c), "the overlapping view waits for the second half")
        T.truthy(a.device ~= b.device, ("disjoint views on two devices (got %d and %d)"):format(
            a.device, b.device))
        T.eq(a.args[1].array, x:id(), "the DAG names the array the view is of")
        T.eq(c.args[1].array, x:id(), "the DAG names the array the view is of")
        rt:close()
    end},

    {"rows of a 2-D array, and views of views", function()
        local rt = T.runtime {}
        local k = T.kernels(rt)
        local m = rt:array("float32", {8, 16})
        local v = m:slice(3, 6)
        local w = v:slice(2, 3) -- rows 4 and 5 of m
        T.eq(table.concat(v:shape(), ","), "4,16", "v shape")
        T.eq(table.concat(w:shape(), ","), "2,16", "w shape")
        T.eq(#w, 32, "#w counts elements")
        T.eq(tostring(w), ("polygpu.array(float32, {2, 16}, view of rows 4 to 5 of array %d)"):format(
            m:id()), "tostring names the rows of the array")
        k.fill(T.grid(32))(w, 7.0, 32)
        T.all(m, function(i) return (i > 3 * 16 and i <= 5 * 16) and 7.0 or 0.0 end, "m")
        T.all(v, function(i) return (i > 16 and i <= 48) and 7.0 or 0.0 end, "v")
        m[4 * 16 + 1] = 9.0 -- row 5, column 1 of m is w[17]
        T.eq(w[17], 9.0, "the array's write seen through a view of a view")
        w[1] = 11.0
        T.eq(m[3 * 16 + 1], 11.0, "a view of a view writes through")
        T.eq(rows_of(m:split {1, 6, 1}), "1,6,1", "split counts rows, not elements")
        T.raises(function() return m:slice(1, 9) end, "rows are 1 to 8")
        rt:close()
    end},

    {"freeing the array first keeps the views' memory", function()
        local N, H = 1024, 512
        local rt = T.runtime {}
        local k = T.kernels(rt)
        local x, y = rt:array("float32", N), rt:array("float32", H)
        local lo, hi = table.unpack(x:split(2))
        k.fill(T.grid(N))(x, 4.0, N)
        x:free()
        T.raises(function() return x[1] end, "freed")
        T.raises(function() return x:slice(1, 2) end, "freed")
        T.raises(function() return x:split(2) end, "freed")
        T.eq(lo[1], 4.0, "lo after the array was freed")
        k.add1(T.grid(H))(y, hi, H)
        hi:free()
        T.raises(function() return hi[1] end, "freed")
        T.raises(function() k.add1(T.grid(H))(y, hi, H) end, "kernel argument 2", "freed")
        T.truthy(tostring(hi):find(", freed)", 1, true), "tostring of a freed view")
        T.all(y, function() return 5.0 end, "y from hi")
        T.all(lo, function() return 4.0 end, "lo")
        local lolo = lo:slice(1, 10) -- a view of a view whose array is gone
        lo:free()
        T.all(lolo, function() return 4.0 end, "lolo after lo was freed")
        do
            local c <close> = lolo:slice(2, 3)
            T.eq(c[2], 4.0, "a <close> view")
        end
        lolo:free()
        lolo:free() -- twice does nothing, as for arrays
        rt:close()
    end},

    {"views are collected and closed with their runtime", function()
        local rt = T.runtime {}
        local a = iota(rt, 10)
        for _ = 1, 50 do a:split(5) end -- dropped: the collector frees them
        collectgarbage()
        collectgarbage()
        local v = a:slice(2, 4)
        T.eq(values(v), "2,3,4", "a view after many were collected")
        rt:close()
        T.raises(function() return v[1] end, "runtime was closed")
        T.raises(function() return a:slice(1, 2) end, "runtime was closed")
        T.truthy(tostring(v):find("runtime closed", 1, true), "tostring(v)")
    end},

    {"a recording over views replays them", function()
        local N, H = 1024, 512
        local rt = T.runtime {}
        local k = T.kernels(rt)
        local x = rt:array("float32", N)
        local lo, hi = table.unpack(x:split(2))
        local g = rt:record(function()
            k.scale(T.grid(H))(lo, 2.0, H)
            k.add1(T.grid(H))(hi, lo, H)
        end)
        k.fill(T.grid(H))(lo, 1.0, H)
        for _ = 1, 4 do g() end
        T.eq(lo[1], 16.0, "lo doubled four times")
        T.eq(hi[H], 17.0, "hi from lo")
        T.eq(x[H + 1], 17.0, "seen through the array")
        rt:close()
    end},
}
