-- support.lua: what the Lua suite files share: kernels, runtimes, assertions, DAG queries.
local pg = require "polygpu"

local T = {pg = pg}

-- Element-wise kernels (CUDA C; kernels index from 0, Lua arrays from 1).
T.SRC = [[
extern "C" __global__ void fill(float *y, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = v; }
extern "C" __global__ void add1(float *y, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] + 1.0f; }
extern "C" __global__ void sum2(float *y, const float *a, const float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a[i] + b[i]; }
extern "C" __global__ void scale(float *y, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = y[i] * s; }
extern "C" __global__ void iota(int *y, long long start, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = (int)(start + i); }
extern "C" __global__ void axpy(double *y, double a, const double *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }
extern "C" __global__ void slow_copy(float *y, const float *x, int n, int reps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float acc = 0.0f; for (int r = 0; r < reps; r++) acc += x[i]; y[i] = acc / reps; }
}
]]

-- Options for a test runtime: PG_TEST_DEVICES overrides the devices (the GPU script sets it);
-- otherwise PG_DEVICES from the environment decides (host:4 under CTest).
function T.runtime(opts)
    opts = opts or {}
    opts.devices = opts.devices or os.getenv("PG_TEST_DEVICES")
    return pg.runtime(opts)
end

function T.kernels(rt, sigs)
    local k = {}
    for _, name in ipairs {"fill", "add1", "sum2", "scale", "iota", "axpy", "slow_copy"} do
        k[name] = rt:kernel(T.SRC, name, sigs and sigs[name])
    end
    return k
end

-- Launch geometry for n elements.
function T.grid(n)
    return (n + 127) // 128, 128
end

-- Assertions ------------------------------------------------------------------------------
function T.eq(got, want, what)
    if got ~= want then
        error(("%s: got %s, want %s"):format(what or "value", tostring(got), tostring(want)), 2)
    end
end

function T.truthy(v, what)
    if not v then
        error((what or "condition") .. " does not hold", 2)
    end
end

function T.near(got, want, tol, what)
    if type(got) ~= "number" or math.abs(got - want) > (tol or 1e-6) then
        error(("%s: got %s, want %s"):format(what or "value", tostring(got), tostring(want)), 2)
    end
end

-- f() must raise an error whose message contains each of the plain strings given.
function T.raises(f, ...)
    local ok, err = pcall(f)
    if ok then
        error("expected an error, got none", 2)
    end
    err = tostring(err)
    for _, s in ipairs {...} do
        if not err:find(s, 1, true) then
            error(("error %q does not mention %q"):format(err, s), 2)
        end
    end
    return err
end

-- Every element of array a (or table t) equals f(i) for i = 1..#a.
function T.all(a, f, what)
    local t = type(a) == "table" and a or a:to_table()
    for i = 1, #t do
        local want = f(i)
        if t[i] ~= want then
            error(("%s[%d]: got %s, want %s"):format(what or "array", i, tostring(t[i]),
                tostring(want)), 2)
        end
    end
end

-- DAG queries ------------------------------------------------------------------------------
-- A DAG view of the vertices added since the mark: kinds filtered, edges as a set.
local Dag = {}
Dag.__index = Dag

-- Remember where the DAG is now; later views see only what comes after.
function T.mark(rt)
    rt:sync()
    local last = 0
    for _, v in ipairs(rt:dag().vertices) do
        last = math.max(last, v.id)
    end
    return last
end

function T.dag(rt, mark)
    local d = rt:dag()
    local view = setmetatable({vertices = {}, by_id = {}, edges = {}, raw = d}, Dag)
    for _, v in ipairs(d.vertices) do
        if v.id > mark then
            view.vertices[#view.vertices + 1] = v
            view.by_id[v.id] = v
        end
    end
    for _, e in ipairs(d.edges) do
        view.edges[e[1] .. ">" .. e[2]] = true
    end
    return view
end

-- The n-th (1-based) vertex of a kind since the mark.
function Dag:nth(kind, n)
    local k = 0
    for _, v in ipairs(self.vertices) do
        if v.kind == kind then
            k = k + 1
            if k == n then
                return v
            end
        end
    end
    error(("no %s vertex #%d in the DAG"):format(kind, n), 2)
end

function Dag:kernel(n)
    return self:nth("kernel", n)
end

function Dag:edge(from, to)
    return self.edges[from.id .. ">" .. to.id] == true
end

return T
