-- test_linalg.lua: polygpu.linalg (gemm, axpy, dot as tasks of the runtime, OpenBLAS on CPU
-- devices) against naive references computed here, ordering with kernels before and after, and
-- argument errors that name the problem and leave the runtime usable.
local T = require "support"
local pg = T.pg
local la = pg.linalg

-- Deterministic values in [-1, 1), exact in float32 (multiples of 1/1024).
local function val(i, seed)
    local x = (i * 2654435761 + seed * 40503) % 2048
    return x / 1024.0 - 1.0
end

local function tol(dtype)
    return dtype == "float64" and 1e-10 or 1e-4
end

local function close(got, want, dtype, what)
    if math.abs(got - want) > tol(dtype) * (1 + math.abs(want)) then
        error(("%s: got %.9g, want %.9g"):format(what, got, want), 2)
    end
end

-- A new rows x cols array of dtype filled with val(i, seed), and its values as a table.
local function matrix(rt, dtype, rows, cols, seed)
    local t = {}
    for i = 1, rows * cols do
        t[i] = val(i, seed)
    end
    return rt:array(dtype, {rows, cols}):from_table(t), t
end

-- C = alpha op(A) op(B) + beta C, naive, row-major, 1-based tables.
local function gemm_ref(m, n, k, ta, tb, alpha, a, b, beta, c)
    local r = {}
    for i = 0, m - 1 do
        for j = 0, n - 1 do
            local s = 0.0
            for p = 0, k - 1 do
                local av = ta and a[p * m + i + 1] or a[i * k + p + 1]
                local bv = tb and b[j * k + p + 1] or b[p * n + j + 1]
                s = s + av * bv
            end
            r[i * n + j + 1] = alpha * s + beta * c[i * n + j + 1]
        end
    end
    return r
end

local function runtime()
    return T.runtime {devices = os.getenv("PG_TEST_DEVICES") or "host:2"}
end

return {
    {"gemm matches a naive reference for several shapes and all transposes", function()
        local rt = runtime()
        local checked = 0
        for _, dtype in ipairs {"float32", "float64"} do
            for s, shape in ipairs {{1, 1, 1}, {3, 5, 7}, {17, 4, 9}, {33, 20, 12}} do
                local m, n, k = shape[1], shape[2], shape[3]
                for t = 0, 3 do
                    local ta, tb = t & 1 == 1, t & 2 == 2
                    local alpha, beta = 1.5, s % 2 == 0 and -0.5 or 0.0
                    local A, a = matrix(rt, dtype, ta and k or m, ta and m or k, s)
                    local B, b = matrix(rt, dtype, tb and n or k, tb and k or n, 100 + s)
                    local C, c = matrix(rt, dtype, m, n, 200 + s)
                    la.gemm(rt, A, B, C, {alpha = alpha, beta = beta, trans_a = ta, trans_b = tb})
                    local want = gemm_ref(m, n, k, ta, tb, alpha, a, b, beta, c)
                    local got = C:to_table()
                    T.eq(#got, m * n, "elements")
                    local what = ("gemm %s m=%d n=%d k=%d ta=%s tb=%s"):format(dtype, m, n, k,
                        ta, tb)
                    for i = 1, m * n do
                        close(got[i], want[i], dtype, what .. " [" .. i .. "]")
                    end
                    checked = checked + 1
                end
            end
        end
        T.eq(checked, 32, "cases")
        rt:close()
    end},

    {"gemm defaults: alpha 1, beta 0 (C's old value ignored), no transposes", function()
        local rt = runtime()
        local A, a = matrix(rt, "float64", 4, 3, 1)
        local B, b = matrix(rt, "float64", 3, 5, 2)
        local C, c = matrix(rt, "float64", 4, 5, 3)
        la.gemm(rt, A, B, C)
        local want = gemm_ref(4, 5, 3, false, false, 1.0, a, b, 0.0, c)
        local got = C:to_table()
        for i = 1, 20 do
            close(got[i], want[i], "float64", "C[" .. i .. "]")
        end
        -- rt:task gives the task itself, launched as a kernel with the C signature's arguments.
        local g = rt:task("gemm_f64")
        T.eq(g:name(), "gemm_f64", "name")
        T.eq(#g:params(), 10, "parameters")
        g(1, 1)(A, B, C, 4, 5, 3, 0, 0, 2.0, 0.0)
        got = C:to_table()
        for i = 1, 20 do
            close(got[i], 2 * want[i], "float64", "2 C[" .. i .. "]")
        end
        T.raises(function() rt:task("gemm_f16") end, "not found", "gemm_f32")
        rt:close()
    end},

    {"axpy then dot read what the call before wrote", function()
        local rt = runtime()
        for _, dtype in ipairs {"float32", "float64"} do
            for _, n in ipairs {1, 1000, 4097} do
                local x, y = {}, {}
                for i = 1, n do
                    x[i] = val(i, 7)
                    y[i] = val(i, 70)
                end
                local X = rt:array(dtype, n):from_table(x)
                local Y = rt:array(dtype, n):from_table(y)
                local R = rt:array(dtype, 1)
                la.axpy(rt, -2.5, X, Y)
                la.dot(rt, X, Y, R) -- reads Y as axpy left it
                local want = 0.0
                for i = 1, n do
                    y[i] = -2.5 * x[i] + y[i]
                    want = want + x[i] * y[i]
                end
                local got = Y:to_table()
                for i = 1, n do
                    close(got[i], y[i], dtype, ("axpy %s n=%d y[%d]"):format(dtype, n, i))
                end
                close(R[1], want, dtype, ("dot %s n=%d"):format(dtype, n))
            end
        end
        rt:close()
    end},

    {"a kernel writes A, gemm reads it, a kernel reads C: values and DAG edges", function()
        local rt = runtime()
        local k = T.kernels(rt)
        local m, n, kk = 8, 6, 5
        local A = rt:array("float32", {m, kk})
        local B = rt:array("float32", {kk, n})
        local C = rt:array("float32", {m, n})
        local D = rt:array("float32", {m, n})
        local mark = T.mark(rt)
        k.fill(T.grid(m * kk))(A, 2.0, m * kk)
        k.fill(T.grid(kk * n))(B, 3.0, kk * n)
        la.gemm(rt, A, B, C)
        k.add1(T.grid(m * n))(D, C, m * n) -- D = C + 1
        T.all(D, function() return 2.0 * 3.0 * kk + 1 end, "D")
        T.all(C, function() return 2.0 * 3.0 * kk end, "C")
        local d = T.dag(rt, mark)
        -- gemm is one tile task here (8 rows: the model's tile is C whole), after the tasks
        -- that measure the device's GEMM rate when it is not cached yet
        local fa, fb, g, add = d:kernel(1), d:kernel(2), nil, nil
        for _, v in ipairs(d.vertices) do
            if v.kind == "kernel" and v.name == "gemm_tile_out_f32" and d:edge(fa, v) then
                g = v
            elseif v.kind == "kernel" and v.name == "add1" then
                add = v
            end
        end
        T.truthy(g, "the tile task's vertex")
        T.truthy(d:edge(fa, g), "fill A -> gemm")
        T.truthy(d:edge(fb, g), "fill B -> gemm")
        T.truthy(d:edge(g, add), "gemm -> add1")
        rt:close()
    end},

    {"errors name the problem, launch nothing and leave the runtime usable", function()
        local rt = runtime()
        local A = rt:array("float32", {3, 4})
        local B = rt:array("float32", {4, 5})
        local C = rt:array("float32", {3, 5})
        local B64 = rt:array("float64", {4, 5})
        local V = rt:array("float32", 12)
        local I = rt:array("int32", {3, 4})
        C:from_table((function() local t = {} for i = 1, 15 do t[i] = 7.0 end return t end)())
        local mark = T.mark(rt)
        T.raises(function() la.gemm(rt, A, B64, C) end, "argument error", "gemm",
            "one dtype", "a float32", "b float64", "c float32")
        T.raises(function() la.gemm(rt, V, B, C) end, "argument error", "gemm",
            "a must be a 2-D array", "{12}")
        T.raises(function() la.gemm(rt, A, A, C) end, "argument error",
            "shapes do not fit", "op(a) is 3 x 4, op(b) 3 x 4, c 3 x 5")
        T.raises(function() la.gemm(rt, A, B, C, {trans_a = true}) end, "shapes do not fit",
            "op(a) is 4 x 3")
        T.raises(function() la.gemm(rt, A, B, C, {transa = true}) end, "unknown option transa")
        T.raises(function() la.gemm(rt, A, B, C, {alpha = "2"}) end, "alpha must be a number")
        T.raises(function() la.gemm(rt, A, B, C, {trans_b = 1}) end, "trans_b must be a boolean")
        T.raises(function() la.gemm(rt, I, I, I) end, "float32 or float64", "int32")
        T.raises(function() la.gemm(rt, A, nil, C) end, "b must be a polygpu array", "nil")
        T.raises(function() la.axpy(rt, 1.0, V, B64) end, "axpy", "one dtype")
        T.raises(function() la.axpy(rt, 1.0, B, V) end, "axpy", "y has 12 elements",
            "fewer than x's 20")
        T.raises(function() la.axpy(rt, "x", V, V) end, "axpy", "alpha must be a number")
        T.raises(function() la.dot(rt, V, B, rt:array("float32", 1)) end, "dot",
            "x has 12 elements and y 20")
        T.raises(function() la.dot(rt, V, V, rt:array("float64", 1)) end, "dot", "one dtype")
        local freed = rt:array("float32", {4, 5})
        freed:free()
        T.raises(function() la.gemm(rt, A, freed, C) end, "state error", "b was freed")
        -- Nothing was launched and C kept its value.
        local d = T.dag(rt, mark)
        for _, v in ipairs(d.vertices) do
            T.truthy(v.kind ~= "kernel", "no kernel vertex after refused calls (" ..
                tostring(v.name) .. ")")
        end
        T.all(C, function() return 7.0 end, "C untouched")
        -- The runtime still works.
        A:from_table {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}
        local b = {}
        for i = 1, 20 do b[i] = i end
        B:from_table(b)
        la.gemm(rt, A, B, C)
        T.all(C, function(i) return b[i] end, "C = I_3x4 B")
        rt:close()
        T.raises(function() la.gemm(rt, A, B, C) end, "closed")
    end},
    {"gemm is tiled over devices: results, the plan, the tile tasks in the DAG", function()
        local rt = T.runtime {devices = "host:4"}
        for _, dtype in ipairs {"float32", "float64"} do
            for case, shape in ipairs {{24, 24, 24}, {40, 30, 4}, {6, 5, 70}} do
                local m, n, k = shape[1], shape[2], shape[3]
                local ta, tb = case % 2 == 0, case == 3
                local A, a = matrix(rt, dtype, ta and k or m, ta and m or k, 1 + case)
                local B, b = matrix(rt, dtype, tb and n or k, tb and k or n, 5 + case)
                local C, c = matrix(rt, dtype, m, n, 9 + case)
                B:prefetch(case - 1) -- B on a device too
                local mark = T.mark(rt)
                local r = la.gemm(rt, A, B, C, {alpha = 0.5, beta = case == 2 and 0 or 1.5,
                    trans_a = ta, trans_b = tb, devices = {1, 2, 3}, tile = 4})
                local want = gemm_ref(m, n, k, ta, tb, 0.5, a, b, case == 2 and 0 or 1.5, c)
                local got = C:to_table()
                for i = 1, m * n do
                    close(got[i], want[i], dtype, dtype .. " tiled gemm [" .. i .. "]")
                end
                T.eq(r.tile, math.min(4, m), "tile")
                T.eq(r.tiles, (m + r.tile - 1) // r.tile, "tiles")
                local rows = 0
                for i, d in ipairs(r.devices) do
                    T.truthy(d >= 1 and d <= 3, "device " .. d .. " allowed")
                    rows = rows + r.rows[i]
                end
                T.eq(rows, m, "rows")
                T.truthy(r.predicted_s > 0, "predicted_s")
                T.truthy(r.predicted_j == nil, "no power on CPU devices")
                local tasks = 0
                for _, v in ipairs(T.dag(rt, mark).vertices) do
                    if v.kind == "kernel" and v.name:match("^gemm_tile") then tasks = tasks + 1 end
                end
                T.truthy(tasks >= r.tiles, "a task per tile in the DAG")
            end
        end
        local A = rt:array("float32", {8, 3})
        local B, C = rt:array("float32", {3, 2}), rt:array("float32", {8, 2})
        T.raises(function() la.gemm(rt, A, B, C, {devices = {7}}) end, "devices[1]", "0 to 3")
        T.raises(function() la.gemm(rt, A, B, C, {devices = {}}) end, "is empty")
        T.raises(function() la.gemm(rt, A, B, C, {tile = 0}) end, "positive number of rows")
        T.raises(function() la.gemm(rt, A, B, C, {metric = "fast"}) end, "perf", "edp")
        T.raises(function() la.gemm(rt, A, B, C, {metric = "edp"}) end, "power")
        T.raises(function() la.gemm(rt, A, B, C, {tiles = 3}) end, "unknown option tiles")
        T.eq(la.gemm(rt, A, B, C, {tile = 2}).tiles, 4, "still usable")
        rt:close()
    end},
}
