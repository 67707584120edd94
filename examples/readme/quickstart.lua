local pg = require "polygpu"
local SRC = [[extern "C" __global__ void square(float *y, const float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] * x[i]; }]]
local rt = pg.runtime {devices = "host:4", policy = "minmax-transfer-time"}
local k = rt:kernel(SRC, "square")
local x, y = rt:array("float32", 1000), rt:array("float32", 1000)
local t = {}
for i = 1, 1000 do t[i] = i - 1 end
x:from_table(t)
k(4, 256)(y, x, 1000)
print(y[4])                                   -- the kernels' element 3
for _, v in ipairs(rt:dag().vertices) do
    if v.kind == "kernel" then print(v.name, v.device) end
end
rt:close()
