#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds TARGET... in the one instrumented tree that the sanitized tests and the libFuzzer targets
# share: clang with ASan and UBSan, fuzz targets enabled ($SANITIZE_BUILD, default
# build-sanitize/). One tree, so the library is compiled once for both (docs/hardening.md).
# Prints the build's wall and CPU time (user + sys, compilers included).
# Usage: scripts/sanitized-build.sh TARGET...
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${SANITIZE_BUILD:-build-sanitize}
# ccache, where installed, comes from CMakeLists.txt. KAREUS_CMAKE_ARGS adds to the first
# configuration (scripts/build-cost.sh times every compile through it).
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  # shellcheck disable=SC2086  # KAREUS_CMAKE_ARGS is a list of arguments
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
    -DCMAKE_CXX_COMPILER=clang++ -DKAREUS_FUZZ=ON -DKAREUS_SANITIZE=address,undefined \
    ${KAREUS_CMAKE_ARGS:-} >/dev/null
fi
targets=()
for t in "$@"; do targets+=(--target "$t"); done
# shellcheck source=scripts/children-cpu.bash
source scripts/children-cpu.bash
start=$SECONDS
children_cpu
cpu_before=$cpu
cmake --build "$BUILD" -j "${JOBS:-$(nproc)}" "${targets[@]}"
children_cpu
echo "sanitized-build: built $# targets in $((SECONDS - start)) s, $((cpu - cpu_before)) CPU s"
