#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer targets of fuzz/ in the clang ASan+UBSan tree (scripts/sanitized-build.sh)
# and runs each for FUZZ_SECONDS (default 20) from its seed corpus in fuzz/corpus/. New inputs go
# to a scratch folder, never into the repository; a crash leaves its input in
# build-sanitize/findings/ and fails the script.
# Usage: scripts/fuzz.sh [target...]     (default: every target)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${SANITIZE_BUILD:-build-sanitize}
SECONDS_EACH=${FUZZ_SECONDS:-20}
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(workload hf_config schedule stage_profile kernel_profile torch_trace energylens_csv
           energylens_model daemon_request)
fi
scripts/sanitized-build.sh "${targets[@]/#/fuzz_}"
mkdir -p "$BUILD/findings"
failed=()
for t in "${targets[@]}"; do
  scratch=$(mktemp -d)
  log="$BUILD/findings/$t.log"
  if [ "$SECONDS_EACH" = 0 ]; then
    # Replay only: every seed (past findings included) once, the same inputs on every run.
    echo "fuzz_$t: replaying $(find "fuzz/corpus/$t" -type f | wc -l) inputs"
    inputs=("fuzz/corpus/$t"/*)
  else
    echo "fuzz_$t: ${SECONDS_EACH} s"
    inputs=(-max_total_time="$SECONDS_EACH" "$scratch" "fuzz/corpus/$t")
  fi
  if UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$BUILD/fuzz/fuzz_$t" -max_len=65536 -timeout=10 -rss_limit_mb=4096 \
    -artifact_prefix="$BUILD/findings/${t}-" -print_final_stats=1 "${inputs[@]}" >"$log" 2>&1; then
    tail -n 4 "$log"
  else
    tail -n 60 "$log"
    failed+=("$t")
  fi
  rm -rf "$scratch"
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: findings in ${failed[*]} (inputs and logs in $BUILD/findings/)" >&2
  exit 1
fi
