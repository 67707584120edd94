-- test_models.lua: rt:models() lists what measured kernels taught; models persist in cache_dir;
-- policy "min-finish-time" turns them on; models = "off" keeps none.
local T = require "support"

local N = 4096
local g, b = T.grid(N)

-- A fresh, empty folder for cache_dir (the runtime creates it and its models/ folder).
local function tmpdir()
    local path = os.tmpname()
    os.remove(path)
    return path
end

local function rmdir(path)
    os.execute(("rm -rf '%s'"):format(path))
end

local function run_add1(rt, times)
    local k = T.kernels(rt)
    local x, y = rt:array("float32", N), rt:array("float32", N)
    k.fill(g, b)(x, 1.0, N)
    for _ = 1, times do
        k.add1(g, b)(y, x, N)
    end
    rt:sync()
    T.all(y, function() return 2.0 end, "y")
end

local function models_of(rt, kernel)
    local found = {}
    for _, m in ipairs(rt:models()) do
        if m.kernel == kernel then found[#found + 1] = m end
    end
    return found
end

local function new_runtime(dir, extra)
    local opts = {devices = "host:2", cache_dir = dir}
    for k, v in pairs(extra or {policy = "min-finish-time"}) do opts[k] = v end
    return T.pg.runtime(opts)
end

return {
    {"models learn a kernel's durations with min-finish-time", function()
        local dir = tmpdir()
        local ok, err = pcall(function()
            local rt <close> = new_runtime(dir)
            T.eq(#models_of(rt, "add1"), 0, "add1 models before any run")
            run_add1(rt, 6)
            local found = models_of(rt, "add1")
            T.eq(#found, 1, "add1 models")
            local m = found[1]
            T.eq(math.type(m.samples), "integer", "samples type")
            T.eq(math.type(m.bytes), "integer", "bytes type")
            T.eq(math.type(m.median_ns), "integer", "median_ns type")
            T.truthy(m.samples >= 3, "samples >= 3 (got " .. m.samples .. ")")
            T.truthy(m.median_ns > 0, "median_ns > 0")
            T.truthy(m.device_class:find("CPU device (", 1, true) == 1,
                     "device_class " .. m.device_class)
            -- both arrays' bytes, rounded down to a power of two
            local bytes = 2 * N * 4
            T.truthy(m.bytes <= bytes and bytes < 2 * m.bytes, "bytes bucket " .. m.bytes)
            T.eq(m.bytes & (m.bytes - 1), 0, "bytes is a power of two")
        end)
        rmdir(dir)
        if not ok then error(err, 0) end
    end},

    {"models off lists none", function()
        local dir = tmpdir()
        local ok, err = pcall(function()
            local rt <close> = new_runtime(dir, {policy = "min-finish-time", models = "off"})
            run_add1(rt, 6)
            T.eq(#rt:models(), 0, "models with models=off")
        end)
        rmdir(dir)
        if not ok then error(err, 0) end
    end},

    {"models persist in cache_dir across runtimes", function()
        local dir = tmpdir()
        local ok, err = pcall(function()
            local kept
            do
                local rt <close> = new_runtime(dir)
                run_add1(rt, 6)
                local found = models_of(rt, "add1")
                T.eq(#found, 1, "add1 models in the first runtime")
                kept = found[1]
            end
            local rt <close> = new_runtime(dir)
            local found = models_of(rt, "add1")
            T.eq(#found, 1, "add1 models loaded by the second runtime")
            T.eq(found[1].samples, kept.samples, "samples loaded")
            T.eq(found[1].median_ns, kept.median_ns, "median_ns loaded")
            T.eq(found[1].bytes, kept.bytes, "bytes loaded")
        end)
        rmdir(dir)
        if not ok then error(err, 0) end
    end},
}
