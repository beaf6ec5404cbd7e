# Entry points. Each runs scripts/setup.sh first so that a fresh Debian machine needs nothing else.
BUILD ?= build
KAREUS := $(BUILD)/apps/kareus/kareus

.PHONY: setup demo test bench mutants format package sanitize fuzz

setup:
	@scripts/setup.sh

# The paper's first configuration: Llama-3.2-3B, TP8 x PP2 on 16 A100-SXM4-40GB, with an HTML
# page of the plan (docs/report.md). Builds only the CLI; `make test` builds the rest.
demo:
	@scripts/setup.sh kareus
	$(KAREUS) plan --model llama3.2-3b --gpu a100-sxm4-40gb --tp 8 --pp 2 --mbs 8 --seq 4096 \
	  --microbatches 8 --recompute full --db $(BUILD)/demo.sqlite --out $(BUILD)/demo \
	  --report $(BUILD)/demo/report.html

test: setup
	cd $(BUILD) && ctest --output-on-failure -j 2

# kareus_<version>_<arch>.deb (cmake/KareusInstall.cmake): what `cmake --install` installs, under /usr.
package: setup
	cd $(BUILD) && cpack -G DEB

bench: setup
	scripts/run-benchmarks.sh $(BUILD)

# Applies each source mutant of scripts/mutants.txt and checks that its tests catch it (slow: each
# mutant rebuilds a test executable; not part of `make test`). See docs/testing.md.
mutants: setup
	scripts/mutants.sh

# The core, executor, NVML, runtime and schedule tests under ASan and UBSan in build-sanitize/
# (not part of `make test`: the instrumented build takes long on a small machine; see
# docs/hardening.md).
SANITIZE_TESTS := test_core test_executor test_nvml test_runtime test_schedule
sanitize:
	@KAREUS_BUILD_DIR=build-sanitize KAREUS_SANITIZE=address,undefined scripts/setup.sh \
	  $(SANITIZE_TESTS)
	@set -e; for t in $(SANITIZE_TESTS); do \
	  KAREUS_DATA_DIR=$(CURDIR)/data XDG_CACHE_HOME=$(CURDIR)/build-sanitize/test-cache \
	  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  build-sanitize/tests/$${t#test_}/$$t --gtest_brief=1; done

# libFuzzer over every reader, FUZZ_SECONDS (default 20) each; see docs/hardening.md.
fuzz:
	scripts/fuzz.sh

format:
	clang-format -i $$(git ls-files '*.hpp' '*.cpp' '*.h' '*.c')
