# The two commands of the README:
#   make demo    set up, build, run examples/saxpy.py
#   make check   set up, build, run every test suite (lit, GoogleTest, pytest,
#                Numba's own CUDA tests against the checked-in expected failures,
#                a short fixed-seed round of the fuzzers, and the kernels' tests
#                with the cpu target's fitted block functions from the first launch)
# Also: make fuzz (FUZZ_COUNT, FUZZ_SECONDS, FUZZ_SEED, FUZZ_JOBS), make check-asan
# (AddressSanitizer + UBSan build in build-asan/), make bench.
PYTHON    := /usr/bin/python3
BUILD     := build
LIT       := /usr/lib/llvm-19/build/utils/lit/lit.py
CMAKE_ARGS := -G Ninja -DPython3_EXECUTABLE=$(PYTHON) -DCMAKE_BUILD_TYPE=Release
# A compiler cache, where one is installed, makes rebuilds in other worktrees cheap.
CCACHE    := $(shell command -v ccache 2>/dev/null)
ifneq ($(CCACHE),)
CMAKE_ARGS += -DCMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE)
endif

# The fuzzers (utils/fuzz/): inputs per fuzzer, a time limit per fuzzer (0:
# none), the seed, the inputs run at once (default: the cores). Reproducers
# of crashes and hangs go to build/fuzz/.
FUZZ_COUNT   ?= 1000
FUZZ_SECONDS ?= 0
FUZZ_SEED    ?= 1
FUZZ_JOBS    ?= $(shell nproc)
ASAN_BUILD   := build-asan
# libstdc++ too: Python does not load it, and ASan's __cxa_throw interceptor
# must find it when the sanitizer starts ("real___cxa_throw != 0" otherwise).
ASAN_RUNTIME  = $(shell g++ -print-file-name=libasan.so) $(shell g++ -print-file-name=libstdc++.so.6)

.PHONY: all setup build demo check check-lit check-gtest check-pytest check-fitted check-fuzz fuzz check-asan clean bench \
        numba-suite numba-suite-simulator

all: build

setup:
	@bash utils/setup.sh

build: setup
	@test -f $(BUILD)/build.ninja || cmake -S . -B $(BUILD) $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD)

demo: build
	@PYTHONPATH=$(BUILD)/python $(PYTHON) examples/saxpy.py

# Numba's own CUDA tests against tidal (docs/numba-suite.md): fails when a test
# leaves utils/numba_suite/expected_failures.txt; UPDATE=1 rewrites that list.
# Its own tools are tested first (utils/numba_suite/test_numba_suite.py).
NUMBA_SUITE = $(PYTHON) -m pytest -q -p no:cacheprovider utils/numba_suite && \
              nice -n 5 $(PYTHON) utils/numba_suite/run.py --build $(BUILD) --jobs 2 \
              $(if $(UPDATE),--update)

# Every suite runs even when an earlier one fails; the exit status is non-zero
# if any failed. pytest runs last so that its summary closes the output.
check: build
	@status=0; \
	echo "== lit (test/lit)"; \
	TIDAL_BUILD_DIR=$(CURDIR)/$(BUILD) $(PYTHON) $(LIT) -s test/lit || status=1; \
	echo "== GoogleTest (tidal_runtime_tests)"; \
	$(BUILD)/bin/tidal_runtime_tests --gtest_brief=1 || status=1; \
	echo "== Numba's CUDA tests (utils/numba_suite)"; \
	$(NUMBA_SUITE) || status=1; \
	echo "== fuzz (a short fixed-seed round; fails on a crash or a hang)"; \
	$(MAKE) --no-print-directory check-fuzz || status=1; \
	echo "== pytest, fitted block functions from the first launch (TIDAL_CPU_FITTED_THREADS=0)"; \
	$(MAKE) --no-print-directory check-fitted || status=1; \
	echo "== pytest (test/python)"; \
	PYTHONPATH=$(BUILD)/python TIDAL_TARGET=cpu $(PYTHON) -m pytest -q -p no:cacheprovider test/python || status=1; \
	exit $$status

check-lit: build
	@TIDAL_BUILD_DIR=$(CURDIR)/$(BUILD) $(PYTHON) $(LIT) -sv test/lit

check-gtest: build
	@$(BUILD)/bin/tidal_runtime_tests

check-pytest: build
	@PYTHONPATH=$(BUILD)/python TIDAL_TARGET=cpu $(PYTHON) -m pytest -v -p no:cacheprovider test/python

# The kernels' tests again with the cpu target's fitted block functions (and
# their coarsened ones) built at the first launch that fits, not after 2^20
# threads: most tests launch fewer, so their kernels otherwise never reach
# the fitted lowering's folded checks and guards or its split x loops.
FITTED_TESTS = test_kernels test_semantics test_exited_threads test_warps test_cpu_rounds \
               test_differential test_reduction test_cooperative_groups test_cpu_private_atomics \
               test_kernels_transpose test_cpu_thread_nests test_cpu_index_checks
check-fitted: build
	@TIDAL_CPU_FITTED_THREADS=0 PYTHONPATH=$(BUILD)/python TIDAL_TARGET=cpu $(PYTHON) -m pytest -q \
	  -p no:cacheprovider $(foreach t,$(FITTED_TESTS),test/python/$(t).py)

numba-suite: build
	@$(NUMBA_SUITE)

# Numba's simulator on the same tests: rewrites utils/numba_suite/simulator_passing.txt.
numba-suite-simulator: setup
	@nice -n 5 $(PYTHON) utils/numba_suite/run.py --build $(BUILD) --jobs 2 --simulator --update

# A short round of each fuzzer with fixed seeds (under a minute in all; the
# inputs are the same whatever FUZZ_JOBS).
check-fuzz: build
	@status=0; \
	$(PYTHON) utils/fuzz/fuzz_frontend.py --count 100 --seed 1 --jobs $(FUZZ_JOBS) --out $(BUILD)/fuzz-check --build $(BUILD) || status=1; \
	$(PYTHON) utils/fuzz/fuzz_markers.py --count 300 --seed 1 --jobs $(FUZZ_JOBS) --out $(BUILD)/fuzz-check --build $(BUILD) || status=1; \
	exit $$status

fuzz: build
	@status=0; \
	FUZZ_COUNT=$(FUZZ_COUNT) FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_SEED=$(FUZZ_SEED) FUZZ_JOBS=$(FUZZ_JOBS) \
	  $(PYTHON) utils/fuzz/fuzz_frontend.py --out $(BUILD)/fuzz --build $(BUILD) || status=1; \
	FUZZ_COUNT=$(FUZZ_COUNT) FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_SEED=$(FUZZ_SEED) FUZZ_JOBS=$(FUZZ_JOBS) \
	  $(PYTHON) utils/fuzz/fuzz_markers.py --out $(BUILD)/fuzz --build $(BUILD) || status=1; \
	exit $$status

# AddressSanitizer + UndefinedBehaviorSanitizer: GoogleTest and pytest against
# a sanitized build. Python itself is not instrumented: the runtime is
# preloaded, and leak checking is off (the interpreter keeps memory to exit).
check-asan: setup
	@test -f $(ASAN_BUILD)/build.ninja || cmake -S . -B $(ASAN_BUILD) $(CMAKE_ARGS) \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTIDAL_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD)
	@status=0; \
	export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1; \
	echo "== GoogleTest (sanitized)"; \
	$(ASAN_BUILD)/bin/tidal_runtime_tests --gtest_brief=1 || status=1; \
	echo "== pytest (sanitized; LD_PRELOAD=$(ASAN_RUNTIME))"; \
	LD_PRELOAD="$(ASAN_RUNTIME)" PYTHONPATH=$(ASAN_BUILD)/python TIDAL_TARGET=cpu \
	  TIDAL_BUILD_DIR=$(CURDIR)/$(ASAN_BUILD) \
	  $(PYTHON) -m pytest -q -p no:cacheprovider test/python || status=1; \
	exit $$status

# Benchmarks (bench/README.md): writes bench/results/<date>-<host>.{json,md,png};
# an unsupported kernel is a row of the table that says why, not a failure.
bench: build
	@$(PYTHON) bench/run.py

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
