# Thin wrapper over meson/ninja. The two commands of README.md:
#   make example   install what is missing, build, run tessel run on a bundled matrix
#   make test      install what is missing, build with -Werror + ASan/UBSan, run every test
# and, not in README.md's two commands:
#   make valgrind  plain debug build, the golden CLI tests under valgrind (memcheck)
#   make tsan      ThreadSanitizer build, the threaded sweep and map tests under it
#   make fuzz-campaign  clang + libFuzzer build, 5 minutes each on the spec and sweep readers
#   make reproduce  every seed paper's headline claim (bench/papers/reproduce.py), table in build/
BUILD      ?= build
TEST_BUILD ?= build-test
VALGRIND_BUILD ?= build-valgrind
TSAN_BUILD ?= build-tsan
VALGRIND   ?= valgrind --error-exitcode=1 -q --leak-check=full
# JOBS=1 limits the valgrind build to one compile job (default: meson's choice).
JOBS       ?=
PACKAGES    = gcc meson ninja-build pkg-config python3 libgsl-dev libyaml-dev libcyaml-dev check zlib1g-dev \
              python3-scipy python3-numpy python3-matplotlib python3-pandas python3-pip \
              python3-setuptools python3-wheel python3-venv

.PHONY: all deps build example test bench reproduce valgrind valgrind-deps tsan fuzz-campaign clean

all: build

# Installs (with sudo when not root) only the Debian packages that are missing.
deps:
	@missing=""; for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi; \
	  $$sudo apt-get update -q && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -q $$missing; \
	fi

$(BUILD)/build.ninja:
	meson setup $(BUILD) --buildtype=release

build: deps $(BUILD)/build.ninja
	meson compile -C $(BUILD)

example: build
	./$(BUILD)/tools/tessel run specs/extensor.yaml --tensor A=examples/data/G51.mtx.gz -o tessel-out

$(TEST_BUILD)/build.ninja:
	meson setup $(TEST_BUILD) --buildtype=debugoptimized -Dwerror=true \
	  -Db_sanitize=address,undefined -Dtests=enabled

test: deps $(TEST_BUILD)/build.ninja
	meson test -C $(TEST_BUILD) --print-errorlogs --num-processes 2

bench: build
	sh bench/run.sh

reproduce: build
	python3 bench/papers/reproduce.py --tessel $(BUILD)/tools/tessel --markdown $(BUILD)/reproductions.md

# No sanitizers here: valgrind cannot run ASan binaries. A debug build (-O0 -g)
# keeps valgrind's stacks exact. Every golden case must pass with nothing
# reported: valgrind's own output on stderr fails the case's stderr check.
$(VALGRIND_BUILD)/build.ninja:
	meson setup $(VALGRIND_BUILD) --buildtype=debug -Dtests=disabled

valgrind-deps:
	@$(MAKE) --no-print-directory deps PACKAGES="$(PACKAGES) valgrind"

valgrind: valgrind-deps $(VALGRIND_BUILD)/build.ninja
	meson compile -C $(VALGRIND_BUILD) $(if $(JOBS),-j $(JOBS)) tools/tessel:executable
	python3 tests/cli/run_golden.py --tessel $(VALGRIND_BUILD)/tools/tessel \
	  --data ../shared/data --wrapper "$(VALGRIND)"

clean:
	rm -rf $(BUILD) $(TEST_BUILD) $(VALGRIND_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD)

# tessel sweep evaluates points on threads: the sweep tests (threads, shards,
# kills and resumes) and the mapper's tests under ThreadSanitizer. Any data
# race aborts the run (halt_on_error) and fails the target.
$(TSAN_BUILD)/build.ninja:
	meson setup $(TSAN_BUILD) --buildtype=debugoptimized -Db_sanitize=thread -Dtests=disabled

tsan: deps $(TSAN_BUILD)/build.ninja
	meson compile -C $(TSAN_BUILD) tools/tessel:executable
	TSAN_OPTIONS=halt_on_error=1 python3 tests/cli/sweep_test.py --tessel $(TSAN_BUILD)/tools/tessel
	TSAN_OPTIONS=halt_on_error=1 python3 tests/cli/map_test.py --tessel $(TSAN_BUILD)/tools/tessel

# libFuzzer needs clang and its runtime (libclang-rt-14-dev on Debian 12), so
# they are installed here only, not by `make deps`. FUZZ_SECONDS per target;
# the targets run side by side. See tests/fuzz/README.md and docs/testing.md.
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 300
FUZZ_TARGETS ?= spec sweep

fuzz-campaign:
	@$(MAKE) --no-print-directory deps PACKAGES="$(PACKAGES) clang libclang-rt-14-dev"
	FUZZ_BUILD=$(FUZZ_BUILD) sh tests/fuzz/campaign.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)
