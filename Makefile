# conveyor - build, test, bench, install.  See README.md.
#   make            build build/conveyor
#   make test       every CUnit suite and the command-line tests (SAN=1: ASan+UBSan)
#   make bench      benchmarks -> table on stdout + build/bench.json
#   make demo       the main job on a shipped default
#   make deps       check (and, as root, install) the Debian packages
#   make MPI=1      build/mpi/conveyor with mpicc: `conveyor sweep` spreads points over MPI ranks
#   make mpitest    build with MPI=1 and check mpirun -n 3 gives the threaded sweep's CSV

PREFIX ?= /usr/local
SAN ?= 0
MPI ?= 0
ifeq ($(MPI),1)
BUILD ?= build/mpi
CC = mpicc
endif
ifeq ($(SAN),1)
BUILD ?= build/san
SANFLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
else
BUILD ?= build
SANFLAGS =
endif

CC ?= cc
PKGS = glib-2.0 gio-2.0 libcjson
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CFLAGS ?= -O2 -g
override CFLAGS += -std=c11 -D_GNU_SOURCE -Wall -Wextra -I. $(PKG_CFLAGS) $(SANFLAGS) -MMD -MP
ifeq ($(CI),true)
override CFLAGS += -Werror
endif
ifeq ($(MPI),1)
override CFLAGS += -DCONVEYOR_MPI
endif
LDLIBS = $(PKG_LIBS) -lcsv -lm
LDFLAGS += $(SANFLAGS)
# Link-time optimisation of build/conveyor and the benchmarks (LTO=0: off; off with SAN=1): the
# engine's calls across files on every event (sim_engine_at -> sim_queue_push, sim_engine_now,
# fabric_link ...) are inlined; callgrind: 11% fewer instructions on a Tree and a ring
# (docs/performance.md, "Hot path, 2026-12-02"). The objects are fat, so the unit tests link their
# ordinary code (-fno-lto) without a whole-program pass each.
ifeq ($(SAN),1)
LTO ?= 0
else
LTO ?= 1
endif
ifeq ($(LTO),1)
override CFLAGS += -flto -ffat-lto-objects
LTO_LINK = -flto=auto
NO_LTO = -fno-lto
endif

LIB_SRC := $(wildcard sim/*.c models/*.c topologies/*.c traces/*.c calibrate/*.c)
CLI_SRC := $(wildcard cli/*.c)
TEST_SRC := $(wildcard tests/test_*.c)
BENCH_SRC := $(wildcard bench/*.c)

LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BENCH_BIN := $(BUILD)/conveyor-bench

.PHONY: studies all test unit clitest bench demo deps install clean validate mpitest fuzz memcheck
all: $(BUILD)/conveyor

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/libconveyor.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/conveyor: $(CLI_OBJ) $(BUILD)/libconveyor.a
	$(CC) $(CFLAGS) $(LDFLAGS) $(LTO_LINK) -o $@ $(CLI_OBJ) $(BUILD)/libconveyor.a $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(BUILD)/libconveyor.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(NO_LTO) -o $@ $< $(BUILD)/libconveyor.a $(LDLIBS) -lcunit

$(BENCH_BIN): $(BENCH_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/libconveyor.a
	$(CC) $(CFLAGS) $(LDFLAGS) $(LTO_LINK) -o $@ $(BENCH_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/libconveyor.a $(LDLIBS)

deps:
	@sh scripts/deps.sh

test: deps
	@$(MAKE) --no-print-directory unit clitest

unit: $(TEST_BIN) $(BUILD)/conveyor
	@sh scripts/run-tests.sh $(BUILD) $(TEST_BIN)

clitest: $(BUILD)/conveyor
	@sh tests/cli/run.sh $(BUILD)/conveyor
	@sh tests/readme/check.sh $(BUILD)/conveyor

bench: deps $(BENCH_BIN) $(BUILD)/conveyor
	@CONVEYOR_BIN=$(BUILD)/conveyor $(BENCH_BIN) $(BUILD)/bench.json

demo: deps $(BUILD)/conveyor
	@sh scripts/demo.sh $(BUILD)/conveyor

mpitest:
	@sh tests/mpi/run.sh

# docs/validation.md: collectives against nccl-tests logs, then training
# throughput against published runs (scripts/validate_scaling.sh; rows over
# 180 CPU seconds each are skipped unless SCALING_ALL=1)
validate: $(BUILD)/conveyor
	@sh scripts/validate.sh $(BUILD)/conveyor

# the headline scaling study, docs/studies/8-to-72.md (about 5 minutes here)
studies: $(BUILD)/conveyor
	@bash scripts/studies.sh $(BUILD)/conveyor

# libFuzzer targets (fuzz/) against a clang ASan/UBSan build in build/fuzz;
# each runs FUZZ_SECONDS (FUZZ_JOBS at a time). See docs/reliability.md.
FUZZ_SECONDS ?= 60
fuzz:
	@sh scripts/fuzz.sh $(FUZZ_SECONDS)

# valgrind memcheck (errors and definite leaks fail) on the golden scenarios.
memcheck: $(BUILD)/conveyor
	@sh scripts/memcheck.sh $(BUILD)/conveyor

install: $(BUILD)/conveyor
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/conveyor/topologies
	install -m 755 $(BUILD)/conveyor $(DESTDIR)$(PREFIX)/bin/conveyor
	install -d $(DESTDIR)$(PREFIX)/share/conveyor/topologies/fabrics
	install -m 644 topologies/*.json $(DESTDIR)$(PREFIX)/share/conveyor/topologies/
	install -m 644 topologies/fabrics/*.json $(DESTDIR)$(PREFIX)/share/conveyor/topologies/fabrics/
	install -d $(DESTDIR)$(PREFIX)/share/conveyor/topologies/accuracy
	install -m 644 topologies/accuracy/*.json $(DESTDIR)$(PREFIX)/share/conveyor/topologies/accuracy/

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
.SECONDARY:

# CUDA microbenchmarks (calibrate/*.cu) -> build/calibrate/, only when nvcc is
# there; SASS for sm_70..sm_100 as far as this nvcc supports them, plus PTX.
NVCC ?= $(shell command -v nvcc 2>/dev/null || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })
CAL_CU := $(wildcard calibrate/*.cu)
CAL_BIN := $(CAL_CU:calibrate/%.cu=build/calibrate/%)
CAL_ARCHS = $(filter 70 75 80 86 89 90 100,$(patsubst sm_%,%,$(shell $(NVCC) --list-gpu-code 2>/dev/null)))
CAL_PTX = $(lastword $(CAL_ARCHS))
CAL_FLAGS = -std=c++17 -O2 -lineinfo $(foreach a,$(CAL_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
	-gencode arch=compute_$(CAL_PTX),code=compute_$(CAL_PTX)
.PHONY: calibrate
calibrate:
ifeq ($(strip $(NVCC)),)
	@echo "calibrate: nvcc not found, skipping (the rest of conveyor does not need it)"
else
	@$(MAKE) --no-print-directory $(CAL_BIN)
endif

build/calibrate/%: calibrate/%.cu calibrate/common.cuh
	@mkdir -p $(dir $@)
	$(NVCC) $(CAL_FLAGS) -o $@ $< $(if $(filter build/calibrate/nccl,$@),-lnccl)$(if $(filter build/calibrate/gemm build/calibrate/overlap,$@),-lcublasLt -lcublas)
