#!/usr/bin/env bash
# Installs every Debian package Kareus needs (only when one is missing), then configures and
# builds in build/. Idempotent: a second run only rebuilds what changed. With --no-build it stops
# after the packages (make sanitize and make fuzz build their own tree).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake pkg-config clang clang-format
  nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev libsqlite3-dev
  libeigen3-dev libceres-dev liblbfgspp-dev libxgboost-dev libpagmo-dev libboost-dev
  libgtest-dev libgmock-dev libbenchmark-dev coinor-libcbc-dev
  pybind11-dev python3-dev python3-pytest python3-torch libopenmpi-dev
  chromium
)
# npm fetches the charting libraries `kareus report` inlines (web/package.json). A Node.js from
# elsewhere that already brings npm is used as it is: Debian's npm would conflict with it.
command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

[ "${1:-}" = "--no-build" ] && exit 0

# The exact versions of web/package-lock.json, fetched again only when the lock file changes.
if [ ! web/node_modules/.package-lock.json -nt web/package-lock.json ]; then
  echo "setup: fetching the report's charting libraries (npm ci in web/)" >&2
  (cd web && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error) ||
    { echo "setup: npm ci in web/ failed" >&2; exit 1; }
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
if [ ! -f "$build_dir/CMakeCache.txt" ] || [ -n "${KAREUS_RECONFIGURE:-}" ]; then
  echo "setup: configuring $build_dir ($build_type)" >&2
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE="$build_type" "${extra[@]}" >>"$log" 2>&1 ||
    fail "configuring"
fi
# Arguments name the targets to build (make demo builds only the CLI); none builds everything.
targets=()
for t in "$@"; do targets+=(--target "$t"); done
echo "setup: building ${*:-everything} in $build_dir (log: $log)" >&2
set +o pipefail
cmake --build "$build_dir" -j "${KAREUS_JOBS:-$(nproc)}" "${targets[@]}" 2>&1 |
  tee -a "$log" |
  awk '/^\[ *[0-9]+%\]/ { p = substr($0, 2, index($0, "%") - 2) + 0;
                           if (p >= next_step) { printf "setup: %d%%\n", p > "/dev/stderr";
                                                 next_step = p - p % 10 + 10 } }'
status=${PIPESTATUS[0]}
set -o pipefail
[ "$status" -eq 0 ] || fail "building"
echo "setup: built" >&2
