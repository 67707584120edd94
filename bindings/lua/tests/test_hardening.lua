-- test_hardening.lua: issue 36's binding probes in Lua: one rule for numbers going into
-- arrays, NUL characters in strings for C, infinite timeouts, booleans for on/off options.
local T = require "support"

local SRC = 'extern "C" __global__ void k(float *y) { }'

local function tmpdir()
    local path = os.tmpname()
    os.remove(path)
    return path
end

return {
    {"a number goes into an integer array only when integral and in range, on every path",
     function()
        local rt = T.runtime()
        local a = rt:array("int32", 2)
        local u = rt:array("uint8", 2)
        -- The rule of every binding (pg_element_store): 2.0 is 2, a fraction, NaN or an
        -- out-of-range value is refused, and nothing is written.
        for _, v in ipairs {1.5, -2.7, 0 / 0} do
            T.raises(function() a[1] = v end, "integer elements take integral values")
            T.raises(function() a:from_table {1, v} end, "from_table: element 2",
                "integer elements take integral values")
        end
        T.raises(function() u[1] = -0.5 end, "does not fit uint8")
        T.raises(function() u:from_table {-0.5, 1} end, "does not fit uint8")
        T.raises(function() u[1] = 256.0 end, "does not fit uint8")
        T.raises(function() u:from_table {1, 300} end, "does not fit uint8")
        T.raises(function() a[1] = math.huge end, "does not fit int32")
        T.all(a, function() return 0 end, "a after refusals")
        T.all(u, function() return 0 end, "u after refusals")
        a[1] = 2.0
        a:from_table {2.0, -3.0}
        T.all(a, function(i) return ({2, -3})[i] end, "integral floats")
        rt:close()
    end},

    {"a NUL inside a string for C is refused, not cut", function()
        -- pg.runtime{cache_dir = "/tmp/x\0y"} used /tmp/x.
        for _, opts in ipairs {
            {cache_dir = "/tmp/x\0y"}, {policy = "round-robin\0junk"},
            {devices = "host:1\0junk"}, {devices = "sim:dgx1-v100\0junk"},
            {check = "off\0junk"}, {trace = "/tmp/t.json\0x"}, {["log\0x"] = "off"},
        } do
            T.raises(function() T.pg.runtime(opts) end, "polygpu: argument error",
                "contains a NUL character")
        end
        local rt = T.runtime()
        T.raises(function() rt:kernel(SRC .. "\0junk", "k") end, "kernel source",
            "contains a NUL")
        T.raises(function() rt:kernel(SRC, "k\0x") end, "kernel name", "contains a NUL")
        T.raises(function() rt:kernel(SRC, "k", "float *y\0x") end, "signature",
            "contains a NUL")
        T.raises(function() rt:kernel(SRC, "k", nil, "-DX=1\0junk") end, "compiler options",
            "contains a NUL")
        T.raises(function() rt:write_trace("/tmp/t\0.json") end, "path", "contains a NUL")
        T.raises(function() rt:export_dag("/tmp/d\0.json") end, "path", "contains a NUL")
        T.raises(function() rt:dag("dot\0x") end, "DAG format", "contains a NUL")
        rt:kernel(SRC, "k", nil, "-DX=1") -- the runtime stays usable
        rt:close()
    end},

    {"math.huge as a timeout means no limit", function()
        -- rt:sync(math.huge) was refused (">= 0, not inf").
        local rt = T.runtime()
        local k = T.kernels(rt)
        local y = rt:array("float32", 16)
        k.fill(T.grid(16))(y, 2.0, 16)
        rt:sync(math.huge)
        rt:sync(1e12)
        T.eq(y[4], 2.0, "y[4]")
        T.raises(function() rt:sync(-1) end, "math.huge: no limit")
        T.raises(function() rt:sync(0 / 0) end, "math.huge: no limit")
        rt:close(math.huge)
    end},

    {"on/off options take booleans; path options refuse them", function()
        -- {models = true} was refused ("unknown models '1': expected off or on").
        local dir = tmpdir()
        for _, name in ipairs {"models", "prefetch", "elide_copies"} do
            for _, v in ipairs {true, false} do
                T.pg.runtime({devices = "host:1", cache_dir = dir, [name] = v}):close()
            end
        end
        local rt = T.pg.runtime {devices = "host:1", cache_dir = dir, models = true}
        local y = rt:array("float32", 4)
        rt:kernel(SRC, "k")(1, 4)(y)
        rt:sync()
        T.truthy(#rt:models() > 0, "models = true learns")
        rt:close()
        rt = T.pg.runtime {devices = "host:1", cache_dir = dir, models = false,
                           policy = "min-finish-time"}
        T.eq(#rt:models(), 0, "models = false keeps none")
        rt:close()
        os.execute(("rm -rf '%s'"):format(dir))
        for _, name in ipairs {"trace", "profile", "cache_dir", "interconnect"} do
            T.raises(function() T.pg.runtime {[name] = true} end,
                ("runtime option '%s' takes a path, got true"):format(name))
        end
    end},
}
