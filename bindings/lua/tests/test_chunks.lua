-- test_chunks.lua: chunked outputs from Lua — a signature "out(chunks=blocks) float *y" lets a
-- copy of y to the host start chunk by chunk while the kernel runs; values as without; the DAG
-- shows the parts; a malformed declaration is an error naming the form.
local T = require "support"

local SRC = [[
extern "C" __global__ void produce(float *y, int n, int reps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;
  float v = (float)i; for (int r = 0; r < reps; r++) v = v * 0.5f + (float)i * 0.5f;
  y[i] = v + 1.0f; }
]]
local N, B = 16384, 128

return {
    {"a chunked output comes to the host in parts, with the right values", function()
        local rt = T.runtime {devices = "host:1", chunk_bytes = "8K"}
        local k = rt:kernel(SRC, "produce", "out(chunks=blocks) float *y, int n, int reps")
        T.eq(k:params()[1].chunk_per_thread, 1, "chunk_per_thread")
        local y = rt:array("float32", N)
        k(N // B, B)(y, N, 2000)
        y:prefetch("host")
        T.all(y, function(i) return i + 0.0 end, "y") -- 1-based: y[i] = (i - 1) + 1
        local parts, bytes = 0, 0
        for _, v in ipairs(rt:dag().vertices) do
            if v.kind == "copy" and v.name:find(" chunk ", 1, true) then
                parts, bytes = parts + 1, bytes + v.bytes
            end
        end
        T.eq(parts, N * 4 // 8192, "parts of 8 KiB")
        T.eq(bytes, N * 4, "bytes")
        rt:close()
    end},
    {"a malformed chunk declaration names the form", function()
        local rt = T.runtime {devices = "host:1"}
        T.raises(function() rt:kernel(SRC, "produce", "out(chunks=rows) float *y, int n, int reps") end,
            "chunks=blocks")
        rt:close()
    end},
}
