-- test_power.lua: the power budget's device set (power_limit, watts injected with power_watts on
-- CPU devices), its errors, and energy per device in rt:stats().
local T = require "support"

local SPIN = [[
extern "C" __global__ void spin(float *a, long long ns) {
  struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
  long long t0 = t.tv_sec * 1000000000LL + t.tv_nsec, now;
  do { clock_gettime(CLOCK_MONOTONIC, &t); now = t.tv_sec * 1000000000LL + t.tv_nsec; }
  while (now - t0 < ns);
  if (threadIdx.x == 0 && blockIdx.x == 0) a[0] += 1.0f; }
]]

local WATTS = "0:120,1:80,2:100,3:40"

local function list(t)
    local s = {}
    for i, v in ipairs(t) do s[i] = tostring(v) end
    return table.concat(s, ",")
end

return {
    {"no budget: every device, figures per device", function()
        local rt = T.pg.runtime {devices = "host:3", power_watts = "0:120,2:40"}
        local c = rt:power_choice()
        T.eq(list(c.devices), "0,1,2", "devices")
        T.eq(c.limit_watts, nil, "limit_watts")
        T.eq(c.watts[1], 120.0, "watts of device 0")
        T.eq(c.watts[2], nil, "watts of device 1 (unknown)")
        T.eq(c.performance_from, "nominal", "performance_from")
        local s = rt:stats()
        T.eq(s.energy_joules[1], 0.0, "energy of device 0")
        T.eq(s.energy_joules[2], nil, "energy of device 1 (unknown)")
        T.eq(s.power_watts[3], 40.0, "power of device 2")
        rt:close()
    end},

    {"budgets choose greedily; kernels run only there", function()
        for _, case in ipairs {{200, "3,1", 120}, {220, "3,1,2", 220}, {40, "3", 40}} do
            local rt = T.pg.runtime {devices = "host:4", power_watts = WATTS,
                power_limit = case[1]}
            local c = rt:power_choice()
            T.eq(list(c.devices), case[2], "devices under " .. case[1] .. " W")
            T.eq(c.used_watts, case[3], "used_watts")
            rt:close()
        end
        local rt = T.pg.runtime {devices = "host:4", policy = "round-robin", power_watts = WATTS,
            power_limit = 200}
        local k = T.kernels(rt)
        local N = 256
        local ys = {}
        for i = 1, 8 do
            ys[i] = rt:array("float32", N)
            k.fill(T.grid(N))(ys[i], 1.5, N)
        end
        T.all(ys[8], function() return 1.5 end, "y")
        local used = {}
        for _, v in ipairs(rt:dag().vertices) do
            if v.kind == "kernel" then used[v.device] = true end
        end
        T.truthy(used[1] and used[3] and not used[0] and not used[2], "only devices 1 and 3")
        rt:close()
    end},

    {"errors name the problem; the next runtime works", function()
        T.raises(function() T.pg.runtime {devices = "host:4", power_watts = WATTS, power_limit = 39} end,
            "polygpu: argument error", "fits no device", "smallest draws 40 W (device 3")
        T.raises(function() T.pg.runtime {devices = "host:2", power_watts = "0:50", power_limit = 100} end,
            "device 1 is unknown")
        T.raises(function() T.pg.runtime {devices = "host:2", power_watts = "0:fifty"} end,
            "power_watts")
        T.raises(function() T.pg.runtime {devices = "host:2", power_limit = -1} end, "power_limit")
        local rt = T.pg.runtime {devices = "host:2", power_watts = 75, power_limit = 80}
        T.eq(list(rt:power_choice().devices), "0", "devices")
        rt:close()
    end},

    {"CPU-device energy: injected watts x busy time", function()
        local rt = T.pg.runtime {devices = "host:2", power_watts = "0:100,1:50", power_limit = 120}
        local k = rt:kernel(SPIN, "spin")
        local a = rt:array("float32", 4)
        local t0 = os.time()
        k(1, 1)(a, 30000000) -- 30 ms on device 1, the only one chosen
        rt:sync()
        local e1 = rt:stats().energy_joules
        T.eq(e1[1], 0.0, "device 0 never busy")
        T.truthy(e1[2] >= 50 * 0.030 and e1[2] <= 50 * (os.time() - t0 + 1), "device 1's energy")
        k(1, 1)(a, 30000000)
        rt:sync()
        T.truthy(rt:stats().energy_joules[2] >= e1[2] + 50 * 0.030, "energy grows with work")
        rt:close()
    end},
}
