#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Measures what building Kareus costs, from scratch and without ccache (CCACHE_DISABLE=1, as on a
# fresh machine): every compile and link runs under scripts/compile-time.sh, which logs its CPU
# seconds (user + sys, the figure that does not depend on what else runs on the machine) and wall
# seconds. Prints the totals and the heaviest objects, each unity batch with the files it holds.
#
#   scripts/build-cost.sh [DIR [CMAKE_ARGS...]]   configures DIR (default build-cost) afresh,
#       builds `kareus` (what make demo builds), then everything else (what make test adds)
#   scripts/build-cost.sh --sanitize [DIR]        the clang ASan+UBSan tree of make ci-extra
#       (default build-cost-sanitize): its tests and fuzz targets (make sanitize-build)
#
# TOP (default 15) sets how many objects are listed. docs/testing.md, "Build cost", has the
# figures.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
sanitize=""
if [ "${1:-}" = --sanitize ]; then
  sanitize=1
  shift
fi
dir=${1:-build-cost${sanitize:+-sanitize}}
[ $# -gt 0 ] && shift
case "$dir" in /*) ;; *) dir="$repo/$dir" ;; esac
rm -rf "$dir"
mkdir -p "$dir"
export CCACHE_DISABLE=1
launcher="$repo/scripts/compile-time.sh"
launchers=()
for lang in C CXX; do
  launchers+=("-DCMAKE_${lang}_COMPILER_LAUNCHER=$launcher" "-DCMAKE_${lang}_LINKER_LAUNCHER=$launcher")
done

# Builds one step with its own log; prints "<what>: <CPU> CPU s (<user> user + <sys> sys), <wall>
# wall, <n> objects".
step() {
  local what=$1 log=$2 start=$SECONDS
  shift 2
  KAREUS_COST_LOG=$log "$@" >"$log.out" 2>&1 || {
    tail -n 40 "$log.out" >&2
    echo "build-cost: $what failed (log: $log.out)" >&2
    exit 1
  }
  local wall=$((SECONDS - start))
  awk -v what="$what" -v wall="$wall" '{ u += $1; s += $2; if ($4 ~ /\.o$/) n++ }
    END { printf "%s: %.0f CPU s (%.0f user + %.0f sys), %d min %02d s wall, %d objects\n",
                 what, u + s, u, s, wall / 60, wall % 60, n }' "$log"
}

if [ -n "$sanitize" ]; then
  echo "build-cost: the sanitized tree in $dir (CCACHE_DISABLE=1)"
  step "sanitized tests and fuzz targets" "$dir/cost-sanitize.log" \
    env SANITIZE_BUILD="$dir" KAREUS_CMAKE_ARGS="${launchers[*]}" JOBS="${JOBS:-$(nproc)}" \
    make -s sanitize-build
  logs=("$dir/cost-sanitize.log")
else
  echo "build-cost: $dir (CCACHE_DISABLE=1)"
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launchers[@]}" "$@" >"$dir/configure.log"
  step "kareus (make demo)" "$dir/cost-cli.log" \
    cmake --build "$dir" -j "${JOBS:-$(nproc)}" --target kareus
  step "everything else (make test)" "$dir/cost-rest.log" cmake --build "$dir" -j "${JOBS:-$(nproc)}"
  logs=("$dir/cost-cli.log" "$dir/cost-rest.log")
  awk '{ t += $1 + $2 } END { printf "total: %.0f CPU s\n", t }' "${logs[@]}"
fi

# The heaviest objects by source file; a unity batch lists the files it includes, a link its output.
echo
echo "| CPU s | wall s | compiled or linked |"
echo "|---:|---:|---|"
awk '{ printf "%.1f %s %s\n", $1 + $2, $3, $4 }' "${logs[@]}" | sort -rn | head -n "${TOP:-15}" |
  while read -r cpu wall object; do
    rel=${object#"$dir/"}
    if [[ "$rel" != */CMakeFiles/* ]]; then
      name="$rel (link)"
    elif [[ "$rel" == */Unity/* ]]; then
      target=${rel%.dir/Unity/*}
      files=$(sed -n 's|^#include "'"$repo"'/\(.*\)"$|\1|p' "${object%.o}" | tr '\n' ' ')
      name="${target##*/} batch: ${files% }"
    else
      name="${rel%%/CMakeFiles/*}/${rel#*.dir/}"
      name=${name%.o}
    fi
    echo "| $cpu | $wall | $name |"
  done
