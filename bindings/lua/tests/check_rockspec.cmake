# check_rockspec.cmake: the test lua_rockspec_version. The root holds exactly one rockspec, named
# polygpu-<VERSION>-1.rockspec and declaring version "<VERSION>-1", VERSION being core/polygpu.h's.
#   cmake -DSOURCE_DIR=<checkout> -DVERSION=<major.minor.patch> -P check_rockspec.cmake
file(GLOB rockspecs RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/*.rockspec)
set(want polygpu-${VERSION}-1.rockspec)
if(NOT rockspecs STREQUAL want)
  message(FATAL_ERROR "the root holds '${rockspecs}', expected exactly ${want}: after changing "
                      "PG_VERSION_* in core/polygpu.h, git mv the rockspec to ${want} and set its "
                      "version = \"${VERSION}-1\"")
endif()
file(STRINGS ${SOURCE_DIR}/${want} lines REGEX "^version *=")
if(NOT lines MATCHES "^version *= *\"${VERSION}-1\" *$")
  message(FATAL_ERROR "${want} declares '${lines}', expected version = \"${VERSION}-1\" "
                      "(core/polygpu.h's version): edit the rockspec's version line")
endif()
message(STATUS "${want}: version ${VERSION}-1, as core/polygpu.h")
