-- test_dag.lua: dependencies the runtime infers from access modes, read back through rt:dag().
local T = require "support"

local N = 1000
local rt = T.runtime {policy = "round-robin"}
local k = T.kernels(rt)
local fill_out = rt:kernel(T.SRC, "fill", "out float *y, float v, int n")
local sum2 = rt:kernel(T.SRC, "sum2", "out float *y, in const float *a, in const float *b, int n")
local g, b = T.grid(N)
local a1, a2, a3, a4 = rt:array("float32", N), rt:array("float32", N), rt:array("float32", N),
    rt:array("float32", N)

return {
    {"independent launches have no edge", function()
        local m = T.mark(rt)
        fill_out(g, b)(a1, 1.0, N)
        fill_out(g, b)(a2, 2.0, N)
        local d = T.dag(rt, m)
        local k1, k2 = d:kernel(1), d:kernel(2)
        T.truthy(not d:edge(k1, k2) and not d:edge(k2, k1), "no edge between independent kernels")
        T.eq(a1[N], 1.0, "a1")
        T.eq(a2[1], 2.0, "a2")
    end},

    {"a chain has edges along it and none transitive", function()
        local m = T.mark(rt)
        fill_out(g, b)(a1, 1.0, N)
        k.add1(g, b)(a2, a1, N)
        k.add1(g, b)(a3, a2, N)
        local d = T.dag(rt, m)
        local k1, k2, k3 = d:kernel(1), d:kernel(2), d:kernel(3)
        T.truthy(d:edge(k1, k2), "edge 1 -> 2")
        T.truthy(d:edge(k2, k3), "edge 2 -> 3")
        T.truthy(not d:edge(k1, k3), "no transitive edge 1 -> 3")
        T.all(a3, function() return 3.0 end, "a3")
    end},

    {"a diamond joins both branches", function()
        local m = T.mark(rt)
        fill_out(g, b)(a1, 3.0, N)
        k.add1(g, b)(a2, a1, N)
        k.add1(g, b)(a3, a1, N)
        sum2(g, b)(a4, a2, a3, N)
        local d = T.dag(rt, m)
        local top, l, r, bottom = d:kernel(1), d:kernel(2), d:kernel(3), d:kernel(4)
        T.truthy(d:edge(top, l) and d:edge(top, r), "top feeds both branches")
        T.truthy(d:edge(l, bottom) and d:edge(r, bottom), "both branches feed the bottom")
        T.truthy(not d:edge(l, r) and not d:edge(r, l), "the branches are not ordered")
        T.all(a4, function() return 8.0 end, "a4")
    end},

    {"two readers of a const array are not ordered", function()
        local m = T.mark(rt)
        fill_out(g, b)(a1, 5.0, N)
        k.add1(g, b)(a2, a1, N)
        k.add1(g, b)(a3, a1, N)
        local d = T.dag(rt, m)
        local w, r1, r2 = d:kernel(1), d:kernel(2), d:kernel(3)
        T.truthy(d:edge(w, r1) and d:edge(w, r2), "both readers wait for the writer")
        T.truthy(not d:edge(r1, r2) and not d:edge(r2, r1), "readers not ordered")
        T.eq(a2[7], 6.0, "a2")
        T.eq(a3[N], 6.0, "a3")
    end},

    {"a write waits for the readers before it", function()
        local m = T.mark(rt)
        fill_out(g, b)(a1, 1.0, N)
        k.add1(g, b)(a2, a1, N) -- reads a1
        fill_out(g, b)(a1, 9.0, N) -- then overwrites it
        local d = T.dag(rt, m)
        local w1, r, w2 = d:kernel(1), d:kernel(2), d:kernel(3)
        T.truthy(d:edge(r, w2), "write-after-read edge")
        T.truthy(d:edge(w1, w2), "write-after-write edge")
        T.all(a2, function() return 2.0 end, "a2 read the old value")
        T.all(a1, function() return 9.0 end, "a1")
    end},

    {"a host read depends on the last writer only", function()
        local m = T.mark(rt)
        fill_out(g, b)(a1, 4.0, N)
        fill_out(g, b)(a2, 5.0, N)
        T.eq(a1[1], 4.0, "a1[1]")
        local d = T.dag(rt, m)
        local read = d:nth("host_read", 1)
        T.truthy(d:edge(d:kernel(1), read), "the read waits for a1's writer")
        T.truthy(not d:edge(d:kernel(2), read), "the read does not wait for a2's writer")
    end},

    {"vertices carry name, device, stream and argument accesses", function()
        local m = T.mark(rt)
        k.add1(g, b)(a2, a1, N)
        local d = T.dag(rt, m)
        local v = d:kernel(1)
        T.eq(v.name, "add1", "name")
        local ndev = #rt:devices()
        T.truthy(math.type(v.device) == "integer" and v.device >= 0 and v.device < ndev,
            "device is a 0-based device id")
        T.truthy(math.type(v.stream) == "integer" and v.stream >= 0, "stream id")
        T.eq(#v.args, 2, "array arguments")
        T.eq(v.args[1].array, a2:id(), "first argument is a2")
        T.eq(v.args[1].access, "inout", "non-const pointer is inout")
        T.eq(v.args[2].array, a1:id(), "second argument is a1")
        T.eq(v.args[2].access, "in", "const pointer is in")
        rt:sync()
        local done = T.dag(rt, m):kernel(1)
        if rt:devices()[1].kind == "cpu" then -- CPU devices always time their work
            T.truthy(done.end_ns >= done.start_ns and done.start_ns > 0, "timing")
        else -- GPUs time only with the trace option (timing events cost launch time)
            T.eq(done.start_ns, 0, "untimed start without the trace option")
        end
        T.eq(type(rt:dag("dot")), "string", "DOT export")
        T.truthy(rt:dag("json"):find('"vertices"', 1, true), "JSON export")
    end},

    {"export_dag writes DOT or JSON by extension", function()
        local base = os.tmpname()
        rt:export_dag(base .. ".dot")
        rt:export_dag(base .. ".json")
        rt:export_dag(base .. ".txt", "json")
        local function slurp(p)
            local f = assert(io.open(p))
            local s = f:read("a")
            f:close()
            os.remove(p)
            return s
        end
        T.truthy(slurp(base .. ".dot"):find("digraph", 1, true), "DOT file")
        T.truthy(slurp(base .. ".json"):find('"edges"', 1, true), "JSON file")
        T.truthy(slurp(base .. ".txt"):find('"edges"', 1, true), "explicit JSON format")
        os.remove(base)
        T.raises(function() rt:export_dag("/nonexistent-dir/x.dot") end, "polygpu:")
        T.raises(function() rt:export_dag(base, "svg") end, "invalid option")
    end},
}
