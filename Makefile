# A thin driver for CMake. `make run` runs the main job, `make test` the whole suite,
# `make soak` the long fault, load and durability runs (10,000 connections, 256 target
# queues, 20 SIGKILLs; minutes, not part of `make test`); all install missing Debian
# packages first when run as root.
BUILD ?= build
CMAKE_FLAGS ?=
ifneq ($(CI),)
CMAKE_FLAGS += -DBP_WERROR=ON
endif
JOBS ?= $(shell nproc)

.PHONY: all deps build run test soak bench clean

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/busypoll compare

test: build
	cd $(BUILD) && ctest --output-on-failure --timeout 600

soak: build
	cd $(BUILD) && ctest -C soak -L soak --output-on-failure --timeout 1800

bench: build
	@echo "benchmarks: see bench/README.md"

clean:
	rm -rf $(BUILD)
