-- test_waits.lua: every wait can end: rt:sync(seconds), Ctrl-C during a read (an
-- "interrupted" error, the work goes on), and the end of a script with a kernel that never ends.
local T = require "support"
local pg = T.pg

-- A few seconds on one CPU core: the waits below end first.
local BUSY = [[
extern "C" __global__ void busy(float *y, long long n) {
  float acc = 0.0f;
  for (long long i = 0; i < n; i++) acc = acc * 0.999999f + 1.0f;
  y[threadIdx.x] = acc; }
]]
local STEPS = 1500000000

-- The interpreter running this suite, to start child scripts with.
local function lua_exe()
    local i = -1
    while arg[i - 1] do i = i - 1 end
    return arg[i]
end

local function run_child(script, extra)
    local path = os.tmpname()
    local f = assert(io.open(path, "w"))
    f:write(script)
    f:close()
    local cmd = string.format("%s sh -c '%q %q & pid=$!; %s wait $pid; echo status=$?' 2>&1",
                              extra.env or "", lua_exe(), path, extra.before_wait or "")
    local p = assert(io.popen(cmd))
    local out = p:read("a")
    p:close()
    os.remove(path)
    return out
end

return {
    {"sync with a time limit ends with a timeout error; the work goes on", function()
        local rt = pg.runtime {devices = "host:1"}
        local k = rt:kernel(BUSY, "busy")
        local y = rt:array("float32", 1)
        k(1, 1)(y, STEPS)
        T.raises(function() rt:sync(0.05) end, "timeout")
        T.raises(function() rt:sync(-1) end, "timeout must be")
        rt:sync()
        T.truthy(y[1] > 0, "the kernel finished")
        rt:close()
    end},

    {"Ctrl-C during a read is an interrupted error", function()
        local out = run_child(string.format([[
package.cpath = %q
local pg = require "polygpu"
local rt = pg.runtime {devices = "host:1"}
local k = rt:kernel(%q, "busy")
local y = rt:array("float32", 1)
k(1, 1)(y, %d)
io.stdout:write("launched\n") io.stdout:flush()
local ok, err = pcall(function() return y[1] end)
print("read:", ok, err)
]], package.cpath, BUSY, STEPS), {before_wait = "sleep 1; kill -INT $pid;", env = "PG_CLOSE_TIMEOUT=0.2"})
        -- lua.c's own handler then ends the script ("interrupted!") at the next Lua instruction;
        -- the wait ended first: the close at exit still finds the kernel running.
        T.truthy(out:find("interrupted") and out:find("busy #1", 1, true), out)
    end},

    {"the end of a script does not wait forever for a runaway kernel", function()
        local out = run_child(string.format([[
package.cpath = %q
local pg = require "polygpu"
local rt = pg.runtime {devices = "host:1"}
local k = rt:kernel('extern "C" __global__ void forever(float *y) { while (1) { } }', "forever")
local y = rt:array("float32", 1)
k(1, 1)(y)
]], package.cpath), {env = "PG_CLOSE_TIMEOUT=0.3"})
        T.truthy(out:find("forever") and out:find("status=0"), out)
    end},
}
