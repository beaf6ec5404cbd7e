# Entry points. Each runs scripts/setup.sh first so that a fresh Debian machine needs nothing else.
BUILD ?= build
KAREUS := $(BUILD)/apps/kareus/kareus

.PHONY: setup demo test bench mutants format package sanitize sanitize-all sanitize-build fuzz ci-extra ci-fuzz

setup:
	@scripts/setup.sh

# The paper's first configuration: Llama-3.2-3B, TP8 x PP2 on 16 A100-SXM4-40GB, with an HTML
# page of the plan (docs/report.md). Installs and builds only the CLI; `make test` the rest.
# The page needs the charting libraries npm fetched (scripts/setup.sh); offline, the plan runs
# and the page is skipped with one line.
DEMO_JS := web/node_modules/vega-embed/build/vega-embed.min.js
demo:
	@scripts/setup.sh --cli
	@if [ -f $(DEMO_JS) ]; then report="--report $(BUILD)/demo/report.html"; else report=""; \
	  echo "make demo: no charting libraries (npm ci in web/ failed); planning without the page"; fi; \
	set -x; $(KAREUS) plan --model llama3.2-3b --gpu a100-sxm4-40gb --tp 8 --pp 2 --mbs 8 \
	  --seq 4096 --microbatches 8 --recompute full --db $(BUILD)/demo.sqlite --out $(BUILD)/demo \
	  $$report

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

# The library's unit tests, the C API's C test and the CLI's tests (an instrumented `kareus`,
# bad-input corpus included) under ASan, UBSan and LeakSanitizer, in the clang tree the fuzz
# targets share (build-sanitize/; scripts/sanitized-build.sh), less the tests labelled
# sanitize_slow (minutes each when instrumented; docs/hardening.md lists them and why).
# `make sanitize-all` runs those too. Name executables to run only them, e.g.
# make sanitize SANITIZE_TESTS="test_planner capi_test". Costs: docs/hardening.md.
SANITIZE_TESTS := test_core test_hardware test_nvml test_xgb test_workload test_schedule test_partition \
  test_measurement test_plan_dir test_calibration \
  test_executor test_frontier test_kernel_dvfs test_energylens test_runtime \
  test_search test_store test_planner test_report test_scaleout \
  capi_test test_frontier_cli test_plan_sweep test_cli_simulate test_cli_plan \
  test_cli_plan_outputs test_cli_plan_readout test_cli_clock_granularity \
  test_cli_plan_enforceable test_cli_overlap test_cli_energylens test_cli_devices \
  test_cli_report test_cli_compare test_cli_run_schedule test_cli_terminal_output \
  test_cli_bad_input_corpus
SANITIZE_SKIP_LABELS ?= sanitize_slow
sanitize:
	@scripts/setup.sh --no-build
	SANITIZE_SKIP_LABELS='$(SANITIZE_SKIP_LABELS)' scripts/sanitize.sh $(SANITIZE_TESTS)

sanitize-all:
	$(MAKE) sanitize SANITIZE_SKIP_LABELS=

# What make ci-extra builds in that tree, built and not run (scripts/build-cost.sh --sanitize).
sanitize-build:
	scripts/sanitized-build.sh $(SANITIZE_TESTS) fuzz_targets

# libFuzzer over every reader, FUZZ_SECONDS (default 20) each; see docs/hardening.md.
fuzz:
	@scripts/setup.sh --no-build
	scripts/fuzz.sh

# What .ci/run adds after `make test`: the sanitized tests, then every fuzz target replaying its
# seed corpus (past findings included), both from the one instrumented tree. CI_FUZZ_SECONDS > 0
# fuzzes each target that long instead; CI replays only, so that a landing never hangs on a random
# find (exploration is `make fuzz`; docs/hardening.md).
CI_FUZZ_SECONDS ?= 0
ci-extra: sanitize ci-fuzz
ci-fuzz:
	@scripts/setup.sh --no-build
	FUZZ_SECONDS=$(CI_FUZZ_SECONDS) scripts/fuzz.sh

format:
	clang-format -i $$(git ls-files '*.hpp' '*.cpp' '*.h' '*.c')
