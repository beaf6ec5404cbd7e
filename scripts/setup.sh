#!/usr/bin/env bash
# Installs every Debian package Kareus needs (only when one is missing), then configures and
# builds in build/. Idempotent: a second run only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake pkg-config clang-format
  nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev libsqlite3-dev
  libeigen3-dev liblbfgspp-dev libxgboost-dev libpagmo-dev libboost-dev
  libgtest-dev libgmock-dev libbenchmark-dev coinor-libcbc-dev
  pybind11-dev python3-dev python3-pytest python3-torch libopenmpi-dev
)

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

build_type="${KAREUS_BUILD_TYPE:-RelWithDebInfo}"
build_dir="${KAREUS_BUILD_DIR:-build}"
extra=()
[ -n "${KAREUS_SANITIZE:-}" ] && extra+=("-DKAREUS_SANITIZE=${KAREUS_SANITIZE}")
if [ ! -f "$build_dir/CMakeCache.txt" ] || [ -n "${KAREUS_RECONFIGURE:-}" ]; then
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE="$build_type" "${extra[@]}" >&2
fi
cmake --build "$build_dir" -j "${KAREUS_JOBS:-$(nproc)}" >&2
