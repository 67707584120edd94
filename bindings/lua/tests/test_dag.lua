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

    {"the DAG of a known program, field by field", function()
        local spec = os.getenv("PG_TEST_DEVICES") or os.getenv("PG_DEVICES") or "host:4"
        local one = T.runtime {devices = spec:match("^cuda") and "cuda:0" or "host:1",
            policy = "round-robin"}
        local w = one:kernel(T.SRC, "fill", "out float *y, float v, int n")
        local r = one:kernel(T.SRC, "add1")
        local x, y = one:array("float32", N), one:array("float32", N)
        w(g, b)(x, 1.0, N) -- k1 writes x
        r(g, b)(y, x, N) -- k2 reads x: one edge k1 -> k2
        local d = one:dag()
        T.eq(#d.vertices, 2, "vertices")
        local k1, k2 = d.vertices[1], d.vertices[2]
        T.eq(k1.kind, "kernel", "k1 kind")
        T.eq(k1.name, "fill", "k1 name")
        T.eq(k2.name, "add1", "k2 name")
        T.truthy(math.type(k1.id) == "integer" and k1.id > 0 and k2.id > k1.id, "ids, oldest first")
        T.eq(k1.device, 0, "k1 device")
        T.eq(k2.device, 0, "k2 device")
        T.truthy(k1.stream >= 0 and k2.stream >= 0, "streams")
        T.eq(#k1.args, 1, "k1 args")
        T.eq(k1.args[1].array, x:id(), "k1 writes x")
        T.eq(k1.args[1].access, "out", "out")
        T.eq(#k2.args, 2, "k2 args")
        T.eq(k2.args[1].array, y:id(), "k2's first argument")
        T.eq(k2.args[1].access, "inout", "inout")
        T.eq(k2.args[2].array, x:id(), "k2's second argument")
        T.eq(k2.args[2].access, "in", "in")
        T.truthy(math.type(k1.submit_ns) == "integer" and k1.submit_ns <= k2.submit_ns, "submit")
        T.eq(k1.bytes, nil, "bytes only on copies")
        T.eq(#d.edges, 1, "edges")
        T.eq(d.edges[1][1], k1.id, "edge from k1")
        T.eq(d.edges[1][2], k2.id, "edge to k2")
        T.eq(y[1], 2.0, "y[1]") -- a host read, and y's copy to the host
        local later = one:dag()
        T.eq(#later.vertices, 4, "vertices after the read")
        local read, copy = later.vertices[3], later.vertices[4]
        T.eq(read.kind, "host_read", "read kind")
        T.eq(read.device, -1, "read on the host")
        T.eq(read.stream, -1, "no stream on the host")
        T.eq(read.args[1].array, y:id(), "reads y")
        T.eq(copy.kind, "copy", "copy kind")
        T.eq(copy.bytes, 4 * N, "copy bytes")
        T.eq(copy.src, 0, "from device 0")
        T.eq(copy.dst, -1, "to the host")
        local edges = {}
        for _, e in ipairs(later.edges) do
            edges[e[1] .. ">" .. e[2]] = true
        end
        T.eq(#later.edges, 4, "edges after the read")
        for _, e in ipairs {{k1, k2}, {k2, read}, {k2, copy}, {copy, read}} do
            T.truthy(edges[e[1].id .. ">" .. e[2].id], "edge " .. e[1].id .. " -> " .. e[2].id)
        end
        T.eq(#d.vertices, 2, "the earlier snapshot is unchanged")
        one:close()
        T.eq(#later.vertices, 4, "tables outlive the runtime")
        T.raises(function() one:dag() end, "closed")
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
