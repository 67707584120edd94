-- run.lua: the Lua suite's runner. Runs every case of the suite files given as arguments (each
-- returns a list of {name, function}), prints one line per failure and "N passed, N failed",
-- and exits non-zero if anything failed or nothing ran. PG_LUA_FILTER (a Lua pattern) limits
-- the cases run by name.
local dir = arg[0]:match("^(.*)/[^/]*$") or "."
package.path = dir .. "/?.lua;" .. package.path

local filter = os.getenv("PG_LUA_FILTER")
local passed, failed = 0, 0

local function fail(name, err)
    failed = failed + 1
    print(("FAIL %s\n  %s"):format(name, tostring(err):gsub("\n", "\n  ")))
end

for _, file in ipairs(arg) do
    local short = file:match("([^/]*)%.lua$") or file
    local chunk, err = loadfile(file)
    local ok, suite = false, err
    if chunk then
        ok, suite = xpcall(chunk, debug.traceback)
    end
    if not ok then
        fail(short, suite)
    else
        for _, case in ipairs(suite) do
            local name = short .. ": " .. case[1]
            if not filter or name:find(filter) then
                local t0 = os.clock()
                local cok, cerr = xpcall(case[2], debug.traceback)
                -- Collect between cases so finalizers run here, not inside the next case.
                collectgarbage()
                collectgarbage()
                if cok then
                    passed = passed + 1
                    print(("ok   %s (%.2fs cpu)"):format(name, os.clock() - t0))
                else
                    fail(name, cerr)
                end
            end
        end
    end
end

print(("%d passed, %d failed"):format(passed, failed))
os.exit(failed == 0 and passed > 0, true)
