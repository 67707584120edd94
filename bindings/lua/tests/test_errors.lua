-- test_errors.lua: bad input raises a Lua error carrying polygpu's message, and the runtime
-- keeps working afterwards.
local T = require "support"

local N = 64
local rt = T.runtime()
local k = T.kernels(rt)
local x, y = rt:array("float32", N), rt:array("float32", N)

-- After each error the same runtime must still run a kernel correctly.
local function still_works()
    k.fill(T.grid(N))(x, 3.0, N)
    k.add1(T.grid(N))(y, x, N)
    T.all(y, function() return 4.0 end, "y after an error")
end

return {
    {"unknown dtype", function()
        T.raises(function() rt:array("float16", 4) end, "polygpu: argument error", "float16")
        T.raises(function() rt:array(nil, 4) end, "string expected")
        T.raises(function() rt:array("float32\0junk", 4) end, "polygpu: argument error", "NUL")
        still_works()
    end},

    {"unknown option, policy or bad option value", function()
        T.raises(function() T.runtime {colour = "blue"} end, "polygpu: argument error",
            "unknown option 'colour'")
        T.raises(function() T.runtime {policy = "nope"} end, "polygpu:", "nope")
        T.raises(function() T.runtime {exploration_threshold = "lots"} end, "not a number")
        T.raises(function() T.runtime {prefetch = "maybe"} end, "not a boolean")
        T.raises(function() T.runtime {devices = "quantum:3"} end, "polygpu:", "quantum")
        T.raises(function() T.runtime {[1] = "x"} end, "keys must be option names")
        T.raises(function() T.runtime {log = {}} end, "expected a string, number or boolean")
        T.raises(function() T.pg.runtime "host:4" end, "table expected")
        still_works()
    end},

    {"device_memory_limit: a launch over it fails, the runtime goes on", function()
        T.raises(function() T.runtime {device_memory_limit = "lots"} end, "not a byte count")
        local small = T.runtime {devices = "host:1", device_memory_limit = 2 * 4 * N}
        local ks = T.kernels(small)
        local a, b, c = small:array("float32", N), small:array("float32", N),
            small:array("float32", N)
        T.raises(function() ks.sum2(T.grid(N))(a, b, c, N) end, "polygpu:",
            "device_memory_limit 512")
        ks.add1(T.grid(N))(a, b, N)
        T.all(a, function() return 1.0 end, "a after the refused launch")
        small:close()
        still_works()
    end},

    {"bad shapes", function()
        T.raises(function() rt:array("float32", {}) end, "0 dimensions")
        T.raises(function() rt:array("float32", {1, 2, 3, 4, 5}) end, "5 dimensions")
        T.raises(function() rt:array("float32", 2.5) end, "must be an integer")
        T.raises(function() rt:array("float32", {4, "x"}) end, "dimension 2")
        T.raises(function() rt:array("float32", "ten") end, "element count or a table")
        T.raises(function() rt:array("float32", -3) end, "polygpu: argument error")
        T.raises(function() rt:array("float32", {4, 0}) end, "polygpu: argument error")
        still_works()
    end},

    {"wrong argument count", function()
        T.raises(function() k.add1(1, 64)(y, x) end, "polygpu: argument error", "3 arguments")
        T.raises(function() k.add1(1, 64)(y, x, N, N) end, "polygpu: argument error")
        T.raises(function() k.add1(1, 64)() end, "polygpu: argument error")
        still_works()
    end},

    {"wrong argument types", function()
        T.raises(function() k.add1(1, 64)(y, x, true) end, "argument 3", "boolean")
        T.raises(function() k.add1(1, 64)(y, "x", N) end, "argument 2", "string")
        T.raises(function() k.add1(1, 64)(y, x, y) end, "polygpu: argument error")
        T.raises(function() k.add1(1, 64)(y, 1.0, N) end, "polygpu: argument error")
        T.raises(function() k.add1(1, 64)(y, x, 2.5) end, "polygpu: argument error")
        local d = rt:array("float64", N)
        T.raises(function() k.add1(1, 64)(d, x, N) end, "polygpu: argument error")
        still_works()
    end},

    {"scalars out of range for the parameter", function()
        T.raises(function() k.add1(1, 64)(y, x, 1 << 40) end, "polygpu: argument error")
        T.raises(function() k.add1(1, 64)(y, x, -(1 << 40)) end, "polygpu: argument error")
        T.raises(function() k.fill(1, 64)(y, 1e300, N) end, "polygpu: argument error")
        still_works()
    end},

    {"bad launch geometry", function()
        T.raises(function() k.fill(0, 64) end, "grid", "1 to")
        T.raises(function() k.fill(1, {64, 1, 1, 1}) end, "block", "1 to 3")
        T.raises(function() k.fill(1, "64") end, "block", "number or a table")
        T.raises(function() k.fill(1, 64, -1) end, "shared_mem")
        T.raises(function() k.fill({1, 2.5}, 64) end, "grid", "size 2")
        k.fill({1, 1, 1}, {64, 1})(y, 5.0, N)
        T.eq(y[N], 5.0, "table geometry works")
        still_works()
    end},

    {"CPU devices report their launch limits, and launches are checked against them", function()
        local r = T.pg.runtime {devices = "host:2"}
        for _, d in ipairs(r:devices()) do
            T.eq(d.max_threads_per_block, 8192, "max_threads_per_block")
            T.eq(table.concat(d.max_block, ","), "8192,8192,8192", "max_block")
            T.eq(table.concat(d.max_grid, ","), "2147483647,65535,65535", "max_grid")
            T.eq(d.max_shared_memory_per_block, 64 * 1024 * 1024, "max_shared_memory_per_block")
        end
        local count = r:kernel([[
extern "C" __global__ void count(int *y) {
  __shared__ int n;
  if (threadIdx.x == 0) n = 0;
  __syncthreads();
  atomicAdd(&n, 1);
  __syncthreads();
  if (threadIdx.x == 0) y[blockIdx.x] = n;
}]], "count")
        local c = r:array("int32", 2)
        count(2, 8192)(c) -- past a GPU's 1024 threads per block
        T.all(c, function() return 8192 end, "a block of 8192 threads")
        T.raises(function() count(1, 8193)(c) end, "polygpu: argument error",
            "devices 0-1 (CPU devices) each allows 8192 threads per block")
        T.raises(function() count(1, 32, 64 * 1024 * 1024 + 1)(c) end,
            "allows 67108864 bytes (64 MiB) of shared memory per block")
        r:close()
        still_works()
    end},

    {"compile errors carry the compiler's message", function()
        local err = T.raises(function()
            rt:kernel('extern "C" __global__ void broken(float *y) { y[0] = undefined_name; }',
                "broken")
        end, "polygpu: compile error")
        T.truthy(err:find("undefined_name", 1, true), "the log names the problem: " .. err)
        still_works()
    end},

    {"unknown kernel name", function()
        T.raises(function() rt:kernel(T.SRC, "no_such_kernel") end, "polygpu: not found error",
            "no_such_kernel")
        still_works()
    end},

    {"a bad signature", function()
        T.raises(function() rt:kernel(T.SRC, "fill", "out float *y, int n") end, "polygpu:")
        T.raises(function() rt:kernel(T.SRC, "fill", "sideways float *y, float v, int n") end,
            "polygpu:")
        still_works()
    end},

    {"use after free is an error, not a crash", function()
        local a = rt:array("float32", N)
        a:free()
        T.raises(function() return a[1] end, "polygpu: state error", "freed")
        T.raises(function() a[1] = 1 end, "freed")
        T.raises(function() return #a end, "freed")
        T.raises(function() a:to_table() end, "freed")
        T.raises(function() a:from_table {} end, "freed")
        T.raises(function() a:shape() end, "freed")
        T.raises(function() y:copy_from(a) end, "freed")
        T.raises(function() k.fill(1, 64)(a, 1.0, N) end, "argument 1", "freed")
        a:free() -- freeing twice does nothing
        T.truthy(tostring(a):find("freed", 1, true), "tostring says freed")
        local kk = rt:kernel(T.SRC, "fill")
        local launcher = kk(1, 64)
        kk:free()
        T.raises(function() launcher(y, 1.0, N) end, "kernel was freed")
        T.raises(function() kk(1, 64) end, "kernel was freed")
        still_works()
    end},

    {"a closed runtime refuses work; its arrays and kernels too", function()
        local r2 = T.runtime()
        local a = r2:array("float32", 8)
        local kk = r2:kernel(T.SRC, "fill")
        r2:close()
        T.raises(function() r2:array("float32", 8) end, "polygpu: state error", "closed")
        T.raises(function() r2:sync() end, "closed")
        T.raises(function() return a[1] end, "runtime was closed")
        T.raises(function() kk(1, 8)(a, 1.0, 8) end, "runtime was closed")
        T.raises(function() k.fill(1, 64)(a, 1.0, 8) end, "closed runtime")
        a:free() -- nothing left to free: no error
        r2:close() -- closing twice does nothing
        still_works()
    end},
}
