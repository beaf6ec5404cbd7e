#!/usr/bin/env bash
# Builds the test executables TEST... in the clang ASan+UBSan tree (scripts/sanitized-build.sh)
# and runs their tests through ctest (each executable's tests carry its name as a label), with
# UBSan halting on its first report and LeakSanitizer on. See docs/hardening.md.
# Usage: scripts/sanitize.sh TEST...
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${SANITIZE_BUILD:-build-sanitize}
[ $# -gt 0 ] || { echo "usage: scripts/sanitize.sh TEST..." >&2; exit 2; }
scripts/sanitized-build.sh "$@"
labels=$(IFS='|'; echo "$*")
cd "$BUILD"
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ctest --output-on-failure --no-tests=error -j "${JOBS:-$(nproc)}" -L "^(${labels})\$"
