# polygpu: `make demo` and `make test` do everything on a fresh Debian machine (as root).
PYTHON ?= $(shell command -v python3)
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython3_EXECUTABLE=$(PYTHON)
export PG_CACHE_DIR ?= $(CURDIR)/build/kernel-cache

.PHONY: all deps build demo test test-c test-asan test-tsan soak fuzz format clean

all: build

deps:
	@PYTHON=$(PYTHON) scripts/install-deps.sh

# One line per stage (cmake/stage.sh); each stage's output goes to a log shown when it fails.
build: deps
	@cmake/stage.sh "configuring build/" build/configure.log cmake -S . -B build $(CMAKE_FLAGS)
	@cmake/stage.sh "building build/" build/build.log cmake --build build -j$(JOBS)

# The main example: on GPUs when there are any, else on four CPU devices. The build shows one
# line per stage (its output goes to build/configure.log and build/build.log, shown only when
# it fails), so the screen is the example's.
demo: deps
	@cmake/stage.sh "configuring build/" build/configure.log cmake -S . -B build $(CMAKE_FLAGS)
	@cmake/stage.sh "building build/" build/build.log cmake --build build -j$(JOBS)
	@PYTHONPATH=$(CURDIR)/build/bindings/python PG_DEMO_DOT=$(CURDIR)/build/dag.dot $(PYTHON) examples/python/quickstart.py

# Every suite: C (plain, then under ASan+UBSan and TSan), Python, Lua, Java.
test: build
	@echo "running every suite in build/ (C, Python, Lua, Java): ctest -j$(JOBS)"
	@cd build && ctest --output-on-failure -j$(JOBS)
	@$(MAKE) --no-print-directory test-asan test-tsan
	@echo "make test: all suites passed"

# The C suite under sanitizers; the differential test runs fewer programs there. Under ASan+UBSan
# also the Python and Lua suites (the bindings' C: python_tests_asan, lua_tests_asan, label
# asan-bindings); the bindings' plain tests (labels python, lua, readme) are the plain build's.
test-asan:
	@cmake -S . -B build-asan -DPG_SANITIZE=address -DPG_BINDINGS=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
	@cmake/stage.sh "building build-asan/ (ASan+UBSan)" build-asan/build.log cmake --build build-asan -j$(JOBS)
	@echo "running the C, Python and Lua suites under ASan+UBSan: ctest in build-asan/"
	@# LeakSanitizer's exit-time tracer itself crashes now and then on a loaded machine ("Tracer
	@# caught signal 11", test_cpu_compile in 2 of 2 full runs on 2026-11-28, never alone),
	@# failing a clean test: a test that fails is run up to twice more, and every run prints.
	@cd build-asan && PG_DIFF_PROGRAMS=60 ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j$(JOBS) --repeat until-pass:3 -LE '^(python|lua|readme)$$'

test-tsan:
	@cmake -S . -B build-tsan -DPG_SANITIZE=thread -DPG_BINDINGS=OFF -DCMAKE_BUILD_TYPE=Debug >/dev/null
	@cmake/stage.sh "building build-tsan/ (TSan)" build-tsan/build.log cmake --build build-tsan -j$(JOBS)
	@echo "running the C suite under TSan: ctest in build-tsan/"
	@cd build-tsan && PG_DIFF_PROGRAMS=25 TSAN_OPTIONS="halt_on_error=1 die_after_fork=0" ctest --output-on-failure -j$(JOBS)

# Long runs, not part of `make test` (tests/soak/README.md). soak: 100,000 differential programs on
# host:4 under every policy and the threaded variant, resumable (SOAK_* settings in soak.sh).
soak: build
	@tests/soak/soak.sh

# The signature parser, the CPU-source scanner, topology files and options under AFL++ (or
# libFuzzer) with ASan+UBSan, FUZZ_SECONDS per harness (default 600); needs `apt-get install
# afl++` or clang. `make test` runs each for 5 s (fuzz_smoke).
fuzz:
	@tests/fuzz/run.sh

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-asan build-tsan build-fuzz
