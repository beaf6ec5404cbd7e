#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `scripts/setup.sh --cli` (make demo) installs no package that only the tests, the benchmarks,
# the Python bindings, scale-out, the sanitizers or `make format` use, and everything it installs
# `make test` installs too. The tree it configures (KAREUS_BUILD_TESTS=OFF) looks for none of
# those packages: CMake is told that GoogleTest, Google Benchmark, pagmo, pybind11, Python and MPI
# do not exist (CMAKE_DISABLE_FIND_PACKAGE_*, which fails any REQUIRED search for them), and the
# configuration must still succeed and define the kareus target.
set -euo pipefail
source_dir=$1
build_dir=$2
work=$(mktemp -d "${build_dir}/setup-cli-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "setup_cli_test: $*" >&2; exit 1; }

cli=$("$source_dir/scripts/setup.sh" --print-packages --cli 2>/dev/null)
all=$("$source_dir/scripts/setup.sh" --print-packages 2>/dev/null)
for p in libgtest-dev libgmock-dev libbenchmark-dev libpagmo-dev libboost-dev pybind11-dev \
  python3-dev python3-pytest python3-torch libopenmpi-dev chromium clang clang-format lintian; do
  grep -qx "$p" <<<"$cli" && fail "make demo would install $p"
  grep -qx "$p" <<<"$all" || [ "$p" = clang ] || fail "make test would not install $p"
done
for p in $cli; do
  grep -qx "$p" <<<"$all" || fail "make demo installs $p, make test does not"
done

disabled=()
for package in GTest benchmark Pagmo pybind11 Python3 MPI; do
  disabled+=("-DCMAKE_DISABLE_FIND_PACKAGE_${package}=ON")
done
cmake -S "$source_dir" -B "$work/build" -DKAREUS_BUILD_TESTS=OFF "${disabled[@]}" \
  >"$work/configure.log" 2>&1 || { tail -n 30 "$work/configure.log" >&2; fail "configuring failed"; }
cmake --build "$work/build" --target help >"$work/targets.txt"
grep -qx '\.\.\. kareus' "$work/targets.txt" || fail "the tree has no kareus target"
echo "setup_cli_test: make demo installs $(wc -l <<<"$cli") packages and configures without the tests'"
