-- polygpu-0.1.0-1.rockspec: `luarocks make` in a checkout builds the Lua 5.4 module polygpu.so
-- with the project's CMake (target polygpu_lua_rock: the library's code and the binding's in one
-- self-contained file) and installs it into the rocks tree as require "polygpu".
--
-- The version is core/polygpu.h's PG_VERSION_MAJOR.MINOR.PATCH; the test lua_rockspec_version
-- fails when they differ: with the header, rename this file and edit `version`.
--
-- Build type "command", not "cmake": luarocks' cmake back-end builds every target of the
-- top-level project (the C tests, examples, benchmarks, the Python and Java bindings), one job at
-- a time, then installs all of it into the rock; "builtin" would need every C file of the library
-- listed here by hand. These commands build the one target and copy the one file, offline, with
-- nothing but cmake and a C compiler. PG_ROCK_BUILD_DIR moves the build folder out of the
-- checkout (the default, build.luarocks, is what luarocks' cmake back-end uses too).
rockspec_format = "3.0"
package = "polygpu"
version = "0.1.0-1"
source = {
  url = "git+file://.", -- `luarocks make` builds the checkout it runs in and fetches nothing
}
description = {
  summary = "Run CUDA kernels given as source strings on GPUs or CPU devices, scheduled as a DAG",
  detailed = [[
polygpu runs CUDA kernels given as source strings on GPUs, or on CPU devices ("host:N") that
compile them with the host C++ compiler. It infers a DAG from each argument's access mode, tracks
where each array's current value lives, and picks a device and stream for every launch.
]],
  labels = { "gpu", "cuda", "scheduling" },
}
dependencies = {
  "lua >= 5.4, < 5.5",
}
build = {
  type = "command",
  build_command = [[
d="${PG_ROCK_BUILD_DIR:-build.luarocks}" &&
"$(CMAKE)" -S . -B "$d" -DCMAKE_BUILD_TYPE=Release -DPG_BINDINGS=ON -DPG_WERROR=OFF "-DLUA_INCLUDE_DIR=$(LUA_INCDIR)" &&
"$(CMAKE)" --build "$d" --target polygpu_lua_rock --parallel "${CMAKE_BUILD_PARALLEL_LEVEL:-`nproc`}"
]],
  install_command = [[
"$(CMAKE)" -E copy "${PG_ROCK_BUILD_DIR:-build.luarocks}/bindings/lua/rock/polygpu.so" "$(LIBDIR)/polygpu.so"
]],
}
