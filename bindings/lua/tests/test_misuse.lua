-- test_misuse.lua: a mistyped field, a wrong index type or a bad number is an error that names
-- it, never a silent nil or a default; handles used after close or free raise errors.
local T = require "support"

local N = 8

return {
    {"an unknown array field is an error, methods still work", function()
        local rt <close> = T.runtime()
        local a = rt:array("float32", N)
        T.raises(function() return a.foo end, "polygpu: argument error", "'foo'", "polygpu.array")
        T.raises(function() return a.Shape end, "'Shape'")
        T.raises(function() return a["1"] end, "'1'")
        a[1] = 2.5
        T.eq(a[1], 2.5, "a[1], 1-based")
        T.eq(a[1.0], 2.5, "an integral float index")
        T.eq(#a, N, "#a")
        T.eq(a:shape()[1], N, "a:shape()")
        T.eq(a:dtype(), "float32", "a:dtype()")
        T.eq(type(a.prefetch), "function", "a method looked up without a call")
        a:prefetch()
        a:prefetch(0)
        T.eq(#a:to_table(), N, "a:to_table()")
    end},

    {"an array index of the wrong type is an error", function()
        local rt <close> = T.runtime()
        local a = rt:array("int32", N)
        T.raises(function() return a[true] end, "polygpu: argument error", "boolean")
        T.raises(function() return a[false] end, "boolean")
        T.raises(function() return a[{}] end, "table")
        T.raises(function() return a[a] end, "userdata")
        T.raises(function() return a[print] end, "function")
        T.raises(function() return a[0 / 0] end, "not an integer")
        T.raises(function() return a[1.5] end, "not an integer")
        T.raises(function() return a[0] end, "out of range", "1 to 8")
        T.raises(function() a[true] = 1 end, "boolean", "true")
        T.raises(function() a.foo = 1 end, "string", "'foo'")
    end},

    {"an unknown runtime or kernel field is an error", function()
        local rt <close> = T.runtime()
        T.raises(function() return rt.foo end, "polygpu: argument error", "'foo'",
            "polygpu.runtime")
        T.raises(function() return rt[1] end, "polygpu.runtime")
        T.raises(function() return rt.Array end, "'Array'")
        T.eq(type(rt.array), "function", "rt.array")
        local k = rt:kernel(T.SRC, "fill")
        T.raises(function() return k.foo end, "polygpu: argument error", "'foo'", "polygpu.kernel")
        T.raises(function() return k[1] end, "polygpu.kernel")
        T.eq(k:name(), "fill", "k:name()")
        T.eq(#k:params(), 3, "k:params()")
        local a = rt:array("float32", N)
        k(1, N)(a, 4.0, N)
        T.eq(a[N], 4.0, "a launch still works")
    end},

    {"fields of closed or freed handles are errors too", function()
        local rt = T.runtime()
        local a = rt:array("float32", N)
        local k = rt:kernel(T.SRC, "fill")
        local launch = k(1, N)
        rt:close()
        T.raises(function() return a.foo end, "'foo'")
        T.raises(function() return a[1] end, "closed")
        T.raises(function() a[1] = 1 end, "closed")
        T.raises(function() a:prefetch() end, "closed")
        T.raises(function() return #a end, "closed")
        T.raises(function() launch(a, 1.0, N) end, "closed")
        T.raises(function() k(1, N) end, "closed")
        T.raises(function() return k.foo end, "'foo'")
        T.raises(function() rt:sync() end, "closed")
        T.raises(function() return rt.foo end, "'foo'")
        T.truthy(tostring(a):find("runtime closed", 1, true), "tostring(a)")
        a:free() -- freeing after the runtime freed it does nothing
        k:free()
        rt:close()
    end},

    {"NaN, negative or out-of-range exploration thresholds are errors", function()
        for _, v in ipairs {0 / 0, -0.5, -1, 1.5, math.huge, -math.huge} do
            T.raises(function() T.runtime {exploration_threshold = v} end,
                "polygpu: argument error", "exploration_threshold", "[0, 1]")
        end
        for _, v in ipairs {0, 1, 0.25} do
            local rt <close> = T.runtime {exploration_threshold = v}
        end
    end},

    {"bad launch and prefetch numbers are errors", function()
        local rt <close> = T.runtime()
        local k = rt:kernel(T.SRC, "fill")
        local a = rt:array("float32", N)
        T.raises(function() k(0 / 0, N) end, "grid", "integer")
        T.raises(function() k(1, -1) end, "block", "integer")
        T.raises(function() k(1, N, -1) end, "shared_mem")
        T.raises(function() k(1, N, 0 / 0) end, "shared_mem")
        T.raises(function() k(1, N)(a, 1.0, 0 / 0) end, "polygpu: argument error", "nan")
        T.raises(function() a:prefetch(-2) end, "prefetch", "-2")
        T.raises(function() a:prefetch(0 / 0) end, "prefetch")
        T.raises(function() a:prefetch(true) end, "prefetch")
    end},
}
