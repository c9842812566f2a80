# A thin driver for CMake. `make run` runs the main job, `make test` the whole suite;
# both install missing Debian packages first when run as root; `make test-loaded` runs
# the suite again beside two CPU hogs. `make test-asan` runs the
# suite under ASan+UBSan, `make fuzz FUZZ_SECONDS=N` the libFuzzer targets, `make soak`
# the long fault, load and durability runs (10,000 connections, 256 target queues,
# 20 SIGKILLs; about a minute and more, not part of `make test`), `make mutants` the
# mutation check (the tests must catch every bug in tests/mutants/).
BUILD ?= build
CMAKE_FLAGS ?=
ifneq ($(CI),)
CMAKE_FLAGS += -DBP_WERROR=ON
endif
JOBS ?= $(shell nproc)

.PHONY: all deps build run test test-loaded soak test-asan fuzz mutants bench install clean

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/busypoll compare

# In CI (or with NO_SKIPS=1) a skipped test fails the target: on the CI machine every
# test must run (scripts/no-skips.py reads ctest's JUnit report and names each skip).
NO_SKIPS ?= $(if $(CI),1,)
CHECK_SKIPS = if [ -n "$(NO_SKIPS)" ]; then $(CURDIR)/scripts/no-skips.py $(1) || rc=1; fi

# CTEST_ARGS narrows a run (e.g. CTEST_ARGS='-R agent'); test-loaded and test-asan leave
# out the labels whose checks do not depend on load or on memory errors (REPEAT_LE).
CTEST_ARGS ?=
REPEAT_LE ?= pkg|lint|layers|vm
test: build
	rm -f $(BUILD)/junit.xml; cd $(BUILD) && ctest $(CTEST_ARGS) --output-on-failure --timeout 600 --output-junit $(CURDIR)/$(BUILD)/junit.xml; rc=$$?; \
	$(call CHECK_SKIPS,$(CURDIR)/$(BUILD)/junit.xml); exit $$rc

# The same suite on a busy machine: two CPU hogs (busy loops at the suite's own
# priority) run beside it, as other jobs do on a CI runner or a laptop, so every wait
# in a test must be bounded by a state reached, not by how fast the machine is. The
# hogs are killed on every exit (a failure, Ctrl-C, a kill of make's shell). The
# packaging, lint and layering checks (REPEAT_LE) read files only: make test ran them.
LOAD_HOGS ?= 2
test-loaded: build
	@hogs=; trap 'kill $$hogs 2>/dev/null' EXIT; trap 'exit 130' INT TERM HUP; \
	for i in $$(seq $(LOAD_HOGS)); do nice -n 0 sh -c 'while :; do :; done' & hogs="$$hogs $$!"; done; \
	echo "test-loaded: $(LOAD_HOGS) CPU hogs (pids$$hogs) beside make test"; \
	start=$$(date +%s); $(MAKE) --no-print-directory test CTEST_ARGS='-LE "$(REPEAT_LE)"'; rc=$$?; \
	echo "test-loaded: make test under load took $$(($$(date +%s) - start)) s, status $$rc"; exit $$rc

# The soak tests are registered for ctest's "soak" configuration only (tests/CMakeLists.txt):
# a plain ctest, here or under test-asan, never lists them.
soak: build
	cd $(BUILD) && ctest -C soak -L soak --output-on-failure --timeout 1800

# The whole suite again under AddressSanitizer + UndefinedBehaviorSanitizer, in its own
# build directory. A finding fails the process that hit it; ASan and LSan reports also
# go to files under $(ASAN_BUILD)/sanitizer/, and UBSan's (which the combined runtime
# writes to stderr only) are looked for in ctest's log of every test's output, so a
# finding in a child whose exit status a test does not look at (a server it kills, a
# forked helper) still fails the target. The labels in REPEAT_LE are left out: they
# run no code of the project's that a sanitizer could watch (make test ran them).
ASAN_BUILD ?= build-asan
SAN_LOGS = $(CURDIR)/$(ASAN_BUILD)/sanitizer
SAN_ENV = ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1:print_summary=1:log_path=$(SAN_LOGS)/asan \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:print_summary=1 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/sanitizer/lsan.supp:print_suppressions=0

# -Werror stays with the ordinary build: at -O1 with instrumentation gcc warns about
# ranges it cannot follow (e.g. -Wformat-truncation on a loop index), not about bugs.
$(ASAN_BUILD)/CMakeCache.txt:
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DBP_SANITIZE=ON $(CMAKE_FLAGS) -DBP_WERROR=OFF

test-asan: deps $(ASAN_BUILD)/CMakeCache.txt
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	rm -rf $(SAN_LOGS) && mkdir -p $(SAN_LOGS)
	rm -f $(ASAN_BUILD)/junit.xml; cd $(ASAN_BUILD) && $(SAN_ENV) ctest -LE '$(REPEAT_LE)' --output-on-failure --timeout 600 \
		--output-junit $(CURDIR)/$(ASAN_BUILD)/junit.xml; rc=$$?; \
	$(call CHECK_SKIPS,$(CURDIR)/$(ASAN_BUILD)/junit.xml); \
	if [ -n "$$(ls -A $(SAN_LOGS))" ]; then \
		for f in $(SAN_LOGS)/*; do echo "== sanitizer report $$f"; cat "$$f"; done; \
		echo "test-asan: sanitizer reports above (in $(SAN_LOGS))" >&2; exit 1; \
	fi; \
	if grep -n -B2 -A12 'runtime error:\|ERROR: AddressSanitizer\|ERROR: LeakSanitizer' \
		$(CURDIR)/$(ASAN_BUILD)/Testing/Temporary/LastTest.log; then \
		echo "test-asan: sanitizer reports in test output above" >&2; exit 1; \
	fi; exit $$rc

# libFuzzer targets (fuzz/), built with clang in their own directory, each run for
# FUZZ_SECONDS; FUZZ_TARGETS="mode rr_proto" picks some. See scripts/fuzz.sh.
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 10
FUZZ_TARGETS ?=

$(FUZZ_BUILD)/CMakeCache.txt:
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DBP_FUZZ=ON

fuzz: deps $(FUZZ_BUILD)/CMakeCache.txt
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzzers
	scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# Every deliberate bug in tests/mutants/*.mut must make its tests fail: each is
# applied in turn to a scratch copy of the tree under /tmp (one incremental build),
# and a mutant that survives, or no longer applies, fails the target (see the top of
# tests/mutants/run.py). MUTANTS=name,name runs some; MUTANT_FLAGS=--baseline-commands-only
# skips the unmutated run of ctest tests that just passed (CI, after make test); as root.
# MUTANT_SHARDS runs that many shards at once, each in its own scratch tree: most of a
# mutant's time is a test waiting, and the tests hold beside other load (test-loaded).
# MUTANT_SAMPLE=K/N checks only every N-th mutant from the K-th (CI's share, .ci/run).
MUTANT_SHARDS ?= 2
mutants: deps
	python3 tests/mutants/run.py --jobs $(JOBS) --parallel $(MUTANT_SHARDS) $(if $(MUTANTS),--only $(MUTANTS)) \
		$(if $(MUTANT_SAMPLE),--sample $(MUTANT_SAMPLE)) $(MUTANT_FLAGS)

# make install [PREFIX=/usr/local] [DESTDIR=staging]: the program, libbusypoll (.so
# and .a), its headers, busypoll.pc and the manual pages (cmake --install).
PREFIX ?= /usr/local
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

bench: build
	@echo "benchmarks: see bench/README.md"

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
