#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang, ASan and UBSan (build-fuzz/) and runs each for
# FUZZ_SECONDS (default 20) from its seed corpus in fuzz/corpus/. New inputs go to a scratch
# folder, never into the repository; a crash leaves its input in build-fuzz/findings/.
# Usage: scripts/fuzz.sh [target...]     (default: every target)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${FUZZ_BUILD:-build-fuzz}
SECONDS_EACH=${FUZZ_SECONDS:-20}
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(workload schedule stage_profile kernel_profile torch_trace energylens_csv
           energylens_model)
fi
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ -DKAREUS_FUZZ=ON -DKAREUS_SANITIZE=address,undefined \
  "${launcher[@]}" >/dev/null
cmake --build "$BUILD" -j "${JOBS:-2}" --target "${targets[@]/#/fuzz_}"
mkdir -p "$BUILD/findings"
for t in "${targets[@]}"; do
  scratch=$(mktemp -d)
  echo "fuzz_$t: ${SECONDS_EACH} s"
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$BUILD/fuzz/fuzz_$t" -max_total_time="$SECONDS_EACH" -max_len=65536 -timeout=10 \
    -rss_limit_mb=4096 -artifact_prefix="$BUILD/findings/${t}-" -print_final_stats=1 \
    "$scratch" "fuzz/corpus/$t" 2>&1 | tail -n 4
  rm -rf "$scratch"
done
