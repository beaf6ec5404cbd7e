#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the test executables TEST... in the clang ASan+UBSan tree (scripts/sanitized-build.sh)
# and runs their tests through ctest (each executable's tests carry its name as a label), with
# UBSan halting on its first report and LeakSanitizer on. Tests that also carry a label named in
# SANITIZE_SKIP_LABELS (a ctest regex, e.g. sanitize_slow: too slow instrumented for CI) are left
# out; empty runs them all. See docs/hardening.md.
# Usage: [SANITIZE_SKIP_LABELS=sanitize_slow] scripts/sanitize.sh TEST...
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${SANITIZE_BUILD:-build-sanitize}
[ $# -gt 0 ] || { echo "usage: scripts/sanitize.sh TEST..." >&2; exit 2; }
scripts/sanitized-build.sh "$@"
labels=$(IFS='|'; echo "$*")
skip=()
[ -n "${SANITIZE_SKIP_LABELS:-}" ] && skip=(-LE "^(${SANITIZE_SKIP_LABELS})\$")
cd "$BUILD"
start=$SECONDS
status=0
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ctest --output-on-failure --no-tests=error -j "${JOBS:-$(nproc)}" -L "^(${labels})\$" \
  "${skip[@]}" || status=$?
echo "sanitize: tests ran in $((SECONDS - start)) s"
exit "$status"
