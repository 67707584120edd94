-- test_array.lua: arrays from Lua: 1-based indexing, bulk copies, dtypes, shapes, metadata.
local T = require "support"

local rt = T.runtime()
local k = T.kernels(rt)

local DTYPES = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64"}

return {
    {"new arrays are zero-filled; # is the element count", function()
        local a = rt:array("float32", 10)
        T.eq(#a, 10, "#a")
        T.eq(a:dtype(), "float32", "dtype")
        T.eq(#a:shape(), 1, "ndim")
        T.eq(a:shape()[1], 10, "shape[1]")
        T.all(a, function() return 0.0 end, "a")
        T.eq(math.type(a[1]), "float", "float32 elements read as floats")
    end},

    {"indices are 1-based: a[1] is the kernel's y[0]", function()
        local n = 100
        local a = rt:array("int32", n)
        k.iota(T.grid(n))(a, 0, n) -- y[i] = i for kernel index i = 0..n-1
        T.eq(a[1], 0, "a[1] is element 0")
        T.eq(a[n], n - 1, "a[n] is element n-1")
        T.eq(math.type(a[1]), "integer", "int32 elements read as integers")
        a[1] = 42
        T.eq(a[1], 42, "write then read")
        a[n] = -7
        T.eq(a[n], -7, "write then read the last element")
        T.eq(a[2], 1, "a neighbour is untouched")
        T.eq(a[2.0], 1, "an integral float index is an index")
    end},

    {"out-of-range and non-integer indices are errors", function()
        local a = rt:array("float32", 5)
        T.raises(function() return a[0] end, "index 0 out of range", "1 to 5")
        T.raises(function() return a[6] end, "index 6 out of range")
        T.raises(function() return a[-1] end, "out of range")
        T.raises(function() a[0] = 1 end, "out of range")
        T.raises(function() a[6] = 1 end, "out of range")
        T.raises(function() return a[1.5] end, "not an integer")
        T.raises(function() a.x = 1 end, "integer indices")
        T.raises(function() a[1] = "one" end, "expected a number")
        T.raises(function() return a.nonexistent end, "no field 'nonexistent'")
        a[5] = 3
        T.eq(a[5], 3.0, "the array still works")
    end},

    {"every dtype round-trips and range-checks", function()
        local limits = {
            int8 = {-128, 127}, int16 = {-32768, 32767}, int32 = {-2147483648, 2147483647},
            int64 = {math.mininteger, math.maxinteger}, uint8 = {0, 255}, uint16 = {0, 65535},
            uint32 = {0, 4294967295}, uint64 = {0, math.maxinteger},
        }
        for _, dt in ipairs(DTYPES) do
            local a = rt:array(dt, 3)
            T.eq(a:dtype(), dt, "dtype")
            local lim = limits[dt]
            if lim then
                a[1], a[2], a[3] = lim[1], lim[2], 7.0
                T.eq(a[1], lim[1], dt .. " low")
                T.eq(a[2], lim[2], dt .. " high")
                T.eq(math.type(a[3]), "integer", dt .. " reads integers")
                T.eq(a[3], 7, dt .. " from an integral float")
                if lim[1] > math.mininteger then
                    T.raises(function() a[1] = lim[1] - 1 end, "out of range", dt)
                end
                if lim[2] < math.maxinteger then
                    T.raises(function() a[1] = lim[2] + 1 end, "out of range", dt)
                end
                T.raises(function() a[1] = 0.5 end, "no exact " .. dt)
            else
                a[1], a[2], a[3] = 0.5, -2, 1e30
                T.eq(a[1], 0.5, dt)
                T.eq(a[2], -2.0, dt)
                T.eq(math.type(a[2]), "float", dt .. " reads floats")
            end
        end
        local u = rt:array("uint64", 1)
        u[1] = 2.0 ^ 63 -- past math.maxinteger: exact as a float
        T.eq(u[1], 2.0 ^ 63, "uint64 above maxinteger reads as a float")
        local f = rt:array("float32", 1)
        T.raises(function() f[1] = 1e39 end, "does not fit in float32")
        f[1] = math.huge
        T.eq(f[1], math.huge, "infinity fits")
    end},

    {"range errors are the core's message: value, dtype and range, as in every binding",
     function()
        -- Word for word as the Python and C suites expect (test_errors.py, test_element.c).
        local cases = {
            {"uint8", 300, "value 300 does not fit uint8 (out of range 0 to 255)"},
            {"int8", -129, "value -129 does not fit int8 (out of range -128 to 127)"},
            {"uint32", -1, "value -1 does not fit uint32 (out of range 0 to 4294967295)"},
            {"uint64", 2.0 ^ 64, "value 1.8446744073709552e+19 does not fit uint64 "
                .. "(out of range 0 to 18446744073709551615)"},
            {"float32", 1e39, "value 1e+39 does not fit in float32 "
                .. "(out of range -3.4028235e+38 to 3.4028235e+38)"},
            {"int16", 0.5, "value 0.5 has no exact int16 representation"},
        }
        for _, c in ipairs(cases) do
            local a = rt:array(c[1], 2)
            T.raises(function() a[1] = c[2] end, "array element 1: " .. c[3])
            T.raises(function() a:from_table {0, c[2]} end, "from_table: element 2: " .. c[3])
            T.eq(a[1], 0, c[1] .. ": nothing written")
        end
    end},

    {"shapes: a count or a table of dimensions, row-major", function()
        local a = rt:array("float64", {3, 4})
        T.eq(#a, 12, "#a")
        local s = a:shape()
        T.eq(#s, 2, "ndim")
        T.eq(s[1], 3, "rows")
        T.eq(s[2], 4, "cols")
        local a4 = rt:array("uint8", {2, 3, 4, 5})
        T.eq(#a4, 120, "4-D")
        T.eq(tostring(a), "polygpu.array(float64, {3, 4})", "tostring")
        T.eq(tostring(rt:array("int8", 7)), "polygpu.array(int8, {7})", "tostring 1-D")
    end},

    {"to_table and from_table copy every element", function()
        local n = 1000
        local a = rt:array("float32", n)
        local t = {}
        for i = 1, n do t[i] = i * 0.25 end
        T.eq(a:from_table(t), a, "from_table returns the array")
        local back = a:to_table()
        T.eq(#back, n, "#to_table")
        T.all(back, function(i) return i * 0.25 end, "to_table")
        k.scale(T.grid(n))(a, 4.0, n)
        T.all(a, function(i) return i * 1.0 end, "after a kernel")
        T.raises(function() a:from_table {1, 2, 3} end, "3 elements", "1000")
        local bad = {}
        for i = 1, n do bad[i] = i end
        bad[500] = "x"
        T.raises(function() a:from_table(bad) end, "element 500")
        T.all(a, function(i) return i * 1.0 end, "a failed from_table writes nothing")
        local i8 = rt:array("int8", 3)
        T.raises(function() i8:from_table {1, 2, 300} end, "element 3", "out of range")
        local m = rt:array("int16", {2, 2}):from_table {1, 2, 3, 4}
        T.eq(table.concat(m:to_table(), ","), "1,2,3,4", "2-D row-major")
    end},

    {"copy_from copies between arrays of the same dtype and size", function()
        local n = 500
        local a, c = rt:array("float32", n), rt:array("float32", n)
        k.fill(T.grid(n))(a, 6.5, n)
        T.eq(c:copy_from(a), c, "copy_from returns the target")
        T.all(c, function() return 6.5 end, "c")
        a[1] = 0
        T.eq(c[1], 6.5, "a copy, not an alias")
        T.eq(c:copy_from(c), c, "a self-copy is a no-op")
        T.raises(function() c:copy_from(rt:array("float64", n)) end, "same dtype")
        T.raises(function() c:copy_from(rt:array("float32", n + 1)) end, "same dtype")
        T.raises(function() c:copy_from(42) end, "polygpu.array expected")
    end},

    {"a kernel with many arguments", function()
        local params, sum = {}, {}
        for i = 1, 20 do
            params[i] = "float v" .. i
            sum[i] = "v" .. i
        end
        local src = ('extern "C" __global__ void many(float *y, %s, int n) {\n'
            .. '  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = %s; }')
            :format(table.concat(params, ", "), table.concat(sum, " + "))
        local many = rt:kernel(src, "many")
        local n = 10
        local y = rt:array("float32", n)
        local args = {y}
        for i = 1, 20 do args[i + 1] = i end -- integers, converted to float by the core
        args[22] = n
        many(1, 32)(table.unpack(args, 1, 22))
        T.all(y, function() return 210.0 end, "y")
        T.raises(function() many(1, 32)(table.unpack(args, 1, 21)) end, "22 arguments",
            "21 given")
    end},

    {"ids match the DAG's array ids and differ per array", function()
        local a, c = rt:array("float32", 4), rt:array("float32", 4)
        T.truthy(math.type(a:id()) == "integer" and a:id() ~= c:id(), "distinct ids")
    end},
}
