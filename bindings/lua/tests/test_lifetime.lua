-- test_lifetime.lua: when arrays, kernels and runtimes go away: <close>, free(), the garbage
-- collector, and work still running on collected arrays.
local T = require "support"
local pg = T.pg

local rt = T.runtime()
local k = T.kernels(rt)

return {
    {"<close> frees an array at the end of its scope", function()
        local escaped
        do
            local a <close> = rt:array("float32", 16)
            a[3] = 1.5
            T.eq(a[3], 1.5, "usable inside the scope")
            escaped = a
        end
        T.raises(function() return escaped[1] end, "freed")
        T.truthy(tostring(escaped):find("freed", 1, true), "tostring")
    end},

    {"<close> also frees on an error", function()
        local escaped
        local ok = pcall(function()
            local a <close> = rt:array("float32", 16)
            escaped = a
            error("boom")
        end)
        T.eq(ok, false, "the error propagates")
        T.raises(function() return escaped[1] end, "freed")
    end},

    {"<close> on a runtime left on an error: the script's error, and the runtime closed",
     function()
        local escaped
        local ok, err = pcall(function()
            local r <close> = T.runtime()
            escaped = r
            error("boom")
        end)
        T.eq(ok, false, "the error propagates")
        T.truthy(tostring(err):find("boom", 1, true), "the error is boom, not " .. tostring(err))
        T.truthy(tostring(escaped):find("closed", 1, true), "the runtime is closed: " ..
                 tostring(escaped))
        T.raises(function() escaped:array("float32", 8) end, "closed")
    end},

    {"<close> on kernels and runtimes", function()
        local kk, r2
        do
            local r <close> = T.runtime()
            local fill <close> = r:kernel(T.SRC, "fill")
            local a = r:array("float32", 8)
            fill(1, 8)(a, 2.0, 8)
            T.eq(a[8], 2.0, "a[8]")
            kk, r2 = fill, r
        end
        T.raises(function() kk(1, 8) end, "freed")
        T.raises(function() r2:sync() end, "closed")
    end},

    {"a dropped array stays alive while a kernel uses it", function()
        local n = 1 << 16
        local out = rt:array("float32", n)
        local seen = setmetatable({}, {__mode = "v"}) -- sees whether src was collected
        -- In a function of its own, so no stale register of this one keeps src reachable.
        local function launch()
            local src = rt:array("float32", n)
            seen[1] = src
            k.fill(T.grid(n))(src, 3.0, n)
            -- Long enough that the collection below runs while it is in flight on CPU devices.
            k.slow_copy(T.grid(n))(out, src, n, 4000)
        end
        launch()
        collectgarbage()
        collectgarbage()
        T.eq(seen[1], nil, "src was collected")
        T.all(out, function() return 3.0 end, "out, computed from the collected array")
    end},

    {"a freed array stays alive while a kernel uses it", function()
        local n = 1 << 16
        local out, src = rt:array("float32", n), rt:array("float32", n)
        k.fill(T.grid(n))(src, 5.0, n)
        k.slow_copy(T.grid(n))(out, src, n, 4000)
        src:free()
        T.all(out, function() return 5.0 end, "out")
    end},

    {"many create and drop cycles", function()
        local n = 256
        local acc = rt:array("float32", n)
        for i = 1, 500 do
            local a = rt:array("float32", n)
            k.fill(T.grid(n))(a, 1.0, n)
            k.sum2(T.grid(n))(acc, acc, a, n)
            if i % 50 == 0 then
                collectgarbage()
            end
        end
        T.all(acc, function() return 500.0 end, "acc")
        for _ = 1, 200 do
            local a <close> = rt:array("int64", {4, 4})
            a[16] = 1
        end
        collectgarbage()
        T.eq(acc[1], 500.0, "still fine after the collections")
    end},

    {"many runtimes made and collected", function()
        for i = 1, 5 do
            local r = T.runtime()
            local a = r:array("float32", 32)
            r:kernel(T.SRC, "fill")(1, 32)(a, i * 1.0, 32)
            T.eq(a[32], i * 1.0, "a[32]")
            -- r and a are dropped together; the runtime is finalized after its array.
        end
        collectgarbage()
        collectgarbage()
    end},

    {"arrays keep their runtime alive", function()
        local a
        do
            local r = T.runtime()
            a = r:array("float32", 4)
            a[2] = 9
        end
        collectgarbage()
        collectgarbage()
        T.eq(a[2], 9.0, "the runtime was not collected while its array lives")
        a:free()
    end},

    {"module-level functions use one default runtime", function()
        local drt = pg.default_runtime()
        T.eq(pg.default_runtime(), drt, "the same runtime each time")
        local n = 100
        local a, c = pg.array("float32", n), pg.array("float32", {n})
        local add1 = pg.kernel(T.SRC, "add1")
        pg.kernel(T.SRC, "fill")(T.grid(n))(a, 1.0, n)
        add1(T.grid(n))(c, a, n)
        pg.sync()
        T.all(c, function() return 2.0 end, "c")
        T.truthy(pg.stats().kernels >= 2, "stats")
        T.truthy(#pg.devices() >= 1, "devices")
        T.truthy(#pg.dag().vertices >= 2, "dag")
        local trace = os.tmpname()
        pg.write_trace(trace)
        local f = assert(io.open(trace))
        T.truthy(f:read("a"):find("traceEvents", 1, true), "trace file")
        f:close()
        os.remove(trace)
        pg.close()
        T.raises(function() return a[1] end, "runtime was closed")
        T.truthy(pg.default_runtime() ~= drt, "a new default runtime after close")
        pg.close()
    end},

    {"the trace option writes a trace when the runtime closes", function()
        local trace = os.tmpname()
        os.remove(trace)
        local r = T.runtime {trace = trace}
        local a = r:array("float32", 64)
        r:kernel(T.SRC, "fill")(1, 64)(a, 1.0, 64)
        r:close()
        local f = assert(io.open(trace), "trace written at close")
        T.truthy(f:read("a"):find("traceEvents", 1, true), "trace contents")
        f:close()
        os.remove(trace)
    end},

    {"kernels describe their parameters", function()
        local p = k.add1:params()
        T.eq(#p, 3, "parameters")
        T.eq(p[1].name, "y", "name")
        T.eq(p[1].is_array, true, "pointer")
        T.eq(p[1].access, "inout", "T* is inout")
        T.eq(p[2].access, "in", "const T* is in")
        T.eq(p[2].dtype, "float32", "dtype")
        T.eq(p[3].is_array, false, "scalar")
        T.eq(p[3].dtype, "int32", "scalar dtype")
        T.eq(p[3].access, nil, "no access for scalars")
        T.eq(k.add1:name(), "add1", "name")
        T.eq(tostring(k.add1), "polygpu.kernel(add1)", "tostring")
    end},
}
