#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages Kareus needs (only those missing), then configures and builds in
# build/. Idempotent: a second run only rebuilds what changed.
#
#   scripts/setup.sh                   everything (make test): the CLI's packages and the tests';
#                                      builds every target
#   scripts/setup.sh TARGET...         the same packages; builds only the targets named
#   scripts/setup.sh --cli             only what the CLI and its report need (make demo); builds
#                                      `kareus` in a tree configured without the tests, the
#                                      benchmarks and the Python bindings
#   scripts/setup.sh --no-build        everything's packages and clang (make sanitize, make fuzz:
#                                      they build their own tree); builds nothing
#   scripts/setup.sh --print-packages [--cli|--no-build]
#                                      prints the packages that mode needs, one a line, and the
#                                      ones missing on stderr; installs and builds nothing
set -euo pipefail
cd "$(dirname "$0")/.."

# What the CLI needs to build and what its report inlines: make demo installs these and no more.
cli_packages=(
  build-essential cmake pkg-config # the compiler and the build
  nlohmann-json3-dev libcli11-dev  # JSON files, the command line
  libfmt-dev libspdlog-dev         # formatting, logging
  libsqlite3-dev                   # the measurement store
  libeigen3-dev liblbfgspp-dev     # EnergyLens's fits
  libceres-dev                     # kareus calibrate's bounded least squares
  libxgboost-dev                   # the search's surrogate models
  coinor-libcbc-dev                # the pipeline solver's LP and MILP
)
# make test adds what only the tests, the benchmarks, the Python package and scale-out use.
test_packages=(
  libgtest-dev libgmock-dev               # the unit tests
  libbenchmark-dev                        # make bench
  libpagmo-dev libboost-dev               # the hypervolume reference of the search tests
  pybind11-dev python3-dev python3-pytest # the Python bindings and their tests
  python3-torch                           # the PyTorch hooks' tests
  libopenmpi-dev                          # scale-out over MPI and its tests
  chromium                                # the report page opened by test_cli_report
  systemd                                 # systemd-analyze checks the installed unit (package test)
  clang-format                            # make format
  lintian                                 # the .deb's check (package test)
)
# make sanitize and make fuzz build with clang (ASan, UBSan, libFuzzer).
sanitize_packages=(clang)

mode=all
print=""
targets=()
for arg in "$@"; do
  case "$arg" in
    --cli) mode=cli ;;
    --no-build) mode=no-build ;;
    --print-packages) print=1 ;;
    -*) echo "setup: unknown option $arg (allowed: --cli, --no-build, --print-packages)" >&2; exit 2 ;;
    *) targets+=("$arg") ;;
  esac
done
if [ "$mode" = cli ] && [ ${#targets[@]} -gt 0 ]; then
  echo "setup: --cli builds kareus only; no targets allowed (got ${targets[*]})" >&2
  exit 2
fi

packages=("${cli_packages[@]}")
[ "$mode" = cli ] || packages+=("${test_packages[@]}")
[ "$mode" = no-build ] && packages+=("${sanitize_packages[@]}")
# npm fetches the charting libraries `kareus report` inlines (web/package.json). A Node.js from
# elsewhere that already brings npm is used as it is: Debian's npm would conflict with it.
command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ -n "$print" ]; then
  printf '%s\n' "${packages[@]}"
  echo "setup: missing: ${missing[*]:-none}" >&2
  exit 0
fi

# shellcheck source=scripts/children-cpu.bash
source scripts/children-cpu.bash
installed=""
if [ ${#missing[@]} -gt 0 ]; then
  start=$SECONDS
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
  echo "setup: installed ${#missing[@]} packages in $((SECONDS - start)) s" >&2
  installed=1
fi

[ "$mode" = no-build ] && exit 0

# The exact versions of web/package-lock.json, fetched from the npm registry again only when the
# lock file changes. Offline, make demo still builds and plans, without the page (Makefile);
# make test needs them (the report's tests open the page).
if [ ! web/node_modules/.package-lock.json -nt web/package-lock.json ]; then
  echo "setup: fetching the report's charting libraries (npm ci in web/)" >&2
  if ! (cd web && npm ci --no-audit --no-fund --no-update-notifier --ignore-scripts \
    --loglevel=error); then
    [ "$mode" = cli ] || { echo "setup: npm ci in web/ failed" >&2; exit 1; }
    echo "setup: npm ci in web/ failed (no npm registry?); kareus builds, its report pages wait" >&2
  fi
fi

build_type="${KAREUS_BUILD_TYPE:-RelWithDebInfo}"
build_dir="${KAREUS_BUILD_DIR:-build}"
extra=()
[ -n "${KAREUS_SANITIZE:-}" ] && extra+=("-DKAREUS_SANITIZE=${KAREUS_SANITIZE}")
mkdir -p "$build_dir"
log="$build_dir/build.log"
: >"$log"
# The compiler's output goes to the log; the terminal gets one line per tenth of the build, and
# the end of the log when something fails.
fail() {
  echo "setup: $1 failed; the last lines of $log:" >&2
  tail -n 40 "$log" >&2
  exit 1
}
cache="$build_dir/CMakeCache.txt"
configure=()
if [ ! -f "$cache" ]; then
  configure=(-DCMAKE_BUILD_TYPE="$build_type")
  # A tree for the CLI alone does not look for the packages only the tests need.
  [ "$mode" = cli ] && configure+=(-DKAREUS_BUILD_TESTS=OFF)
elif [ "$mode" != cli ] && grep -q '^KAREUS_BUILD_TESTS:BOOL=OFF$' "$cache"; then
  # make demo's tree, now wanted whole: afresh, so that CMake looks again for what it found
  # missing then (MPI among them) now that the packages are installed.
  configure=(--fresh -DCMAKE_BUILD_TYPE="$build_type")
elif [ -n "$installed" ] || [ -n "${KAREUS_RECONFIGURE:-}" ]; then
  configure=(-DCMAKE_BUILD_TYPE="$build_type")
fi
if [ ${#configure[@]} -gt 0 ]; then
  echo "setup: configuring $build_dir ($build_type)" >&2
  cmake "${configure[@]}" -S . -B "$build_dir" "${extra[@]}" >>"$log" 2>&1 || fail "configuring"
fi
# make demo builds only the CLI; no target named builds everything.
[ "$mode" = cli ] && targets=(kareus)
what="${targets[*]:-everything}"
target_args=()
for t in "${targets[@]}"; do target_args+=(--target "$t"); done
echo "setup: building $what in $build_dir (log: $log)" >&2
start=$SECONDS
children_cpu
cpu_before=$cpu
# Read line by line here: awk (mawk) buffers its input and printed the tenths only at the end.
progress() {
  local line next=0
  while IFS= read -r line; do
    printf '%s\n' "$line" >>"$log"
    if [[ "$line" =~ ^\[\ *([0-9]+)%\] ]] && [ "${BASH_REMATCH[1]}" -ge "$next" ]; then
      echo "setup: ${BASH_REMATCH[1]}%" >&2
      next=$((BASH_REMATCH[1] - BASH_REMATCH[1] % 10 + 10))
    fi
  done
}
set +o pipefail
cmake --build "$build_dir" -j "${KAREUS_JOBS:-$(nproc)}" "${target_args[@]}" 2>&1 | progress
status=${PIPESTATUS[0]}
set -o pipefail
[ "$status" -eq 0 ] || fail "building"
wall=$((SECONDS - start))
children_cpu
echo "setup: built $what in $((wall / 60)) min $((wall % 60)) s, $((cpu - cpu_before)) CPU s" >&2
