#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Mutation check: applies each source mutant of scripts/mutants.txt, one at a time, to a scratch
# copy of the working tree, rebuilds only the targets the mutant names and runs only the tests it
# names. A mutant is caught when a listed test fails; one that survives must carry a `harmless:`
# reason in the list, or the run fails. The scratch copy has its own build directory, configured
# once and kept between runs, and the same depth below the repository as build/, so that ccache
# (CCACHE_BASEDIR) serves it from the objects of the ordinary build.
#
#   scripts/mutants.sh [ID...]     all mutants, or only those named
#   scripts/mutants.sh --check     only check that every mutant's pattern is still in its file and
#                                  every id is unique (no build; a ctest runs it)
#
# KAREUS_MUTANTS_DIR (default build-mutants, git-ignored) holds the copy; KAREUS_JOBS the
# build parallelism (default 2); KAREUS_MUTANTS_LIST another list (tests/mutants checks --check). Not run in CI: each mutant costs a rebuild.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
list="${KAREUS_MUTANTS_LIST:-$repo/scripts/mutants.txt}"
scratch="$repo/${KAREUS_MUTANTS_DIR:-build-mutants}"
tree="$scratch/tree"
jobs="${KAREUS_JOBS:-2}"

# Records are blocks of `key: value` lines separated by blank lines; see docs/testing.md.
ids=() files=() froms=() tos=() targets=() tests=() harmless=()
flush() {
  [ -n "${id:-}" ] || return 0
  ids+=("$id") files+=("$file") froms+=("$from") tos+=("$to") targets+=("$target")
  tests+=("$test") harmless+=("$why")
  id=""
}
id="" file="" from="" to="" target="" test="" why=""
while IFS= read -r line || [ -n "$line" ]; do
  case "$line" in
    "#"*) continue ;;
    "") flush ;;
    id:*) id="${line#id: }" file="" from="" to="" target="" test="" why="" ;;
    file:*) file="${line#file: }" ;;
    from:*) from="${line#from: }" ;;
    to:*) to="${line#to: }" ;;
    targets:*) target="${line#targets: }" ;;
    tests:*) test="${line#tests: }" ;;
    harmless:*) why="${line#harmless: }" ;;
    *) echo "mutants: cannot read line: $line" >&2 && exit 2 ;;
  esac
done <"$list"
flush

# A pattern that no longer appears in its file is a mutant that tests nothing: the code moved on
# and the list did not.
if [ "${1:-}" = "--check" ]; then
  status=0
  for i in "${!ids[@]}"; do
    if [ ! -f "${files[$i]}" ] || ! grep -qF -- "${froms[$i]}" "${files[$i]}"; then
      echo "mutants: ${ids[$i]}: stale, its pattern is not in ${files[$i]}: ${froms[$i]}" >&2
      status=1
    fi
  done
  duplicates=$(printf '%s\n' "${ids[@]}" | sort | uniq -d)
  [ -z "$duplicates" ] || { echo "mutants: ids listed twice: $duplicates" >&2 && status=1; }
  [ "$status" -eq 0 ] && echo "mutants: ${#ids[@]} patterns found in their files"
  exit "$status"
fi

# Mirror the tracked and untracked-but-not-ignored files. Only files that differ are copied, so a
# file unchanged since the last run is not rebuilt; a copy takes the time of copying, never the
# source's own (older) time, which make would take for older than an object a mutant left.
mkdir -p "$tree"
git ls-files -co --exclude-standard -z | while IFS= read -r -d '' f; do
  [ -f "$f" ] || continue
  if ! cmp -s "$f" "$tree/$f"; then
    mkdir -p "$tree/$(dirname "$f")"
    cp "$f" "$tree/$f"
  fi
done
# ccache, where installed, comes from CMakeLists.txt.
if [ ! -f "$tree/build/CMakeCache.txt" ]; then
  cmake -S "$tree" -B "$tree/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi

selected=("$@")
wanted() {
  [ ${#selected[@]} -eq 0 ] && return 0
  for w in "${selected[@]}"; do [ "$w" = "$1" ] && return 0; done
  return 1
}

# Replaces every occurrence of a literal string; fails when there is none (a stale mutant).
substitute() {
  python3 - "$1" "$2" "$3" <<'EOF'
import sys
path, old, new = sys.argv[1:]
text = open(path).read()
if old not in text:
    sys.exit(f"pattern not found in {path}: {old}")
open(path, "w").write(text.replace(old, new))
EOF
}

run_tests() {  # targets, test regex
  # shellcheck disable=SC2086
  cmake --build "$tree/build" -j "$jobs" --target $1 >"$scratch/build.log" 2>&1 || return 2
  local status=0
  ctest --test-dir "$tree/build" -R "$2" --timeout 600 >"$scratch/test.log" 2>&1 || status=1
  grep -q "No tests were found" "$scratch/test.log" && return 3
  return $status
}

all_targets=() all_tests=()
for i in "${!ids[@]}"; do
  wanted "${ids[$i]}" || continue
  all_targets+=(${targets[$i]})
  all_tests+=("${tests[$i]}")
done
[ ${#all_targets[@]} -gt 0 ] || { echo "mutants: no mutant selected" >&2 && exit 2; }

# Unmutated, every listed test must pass, or "caught" would mean nothing. One ctest per distinct
# expression: ctest's regular expressions take at most nine groups, so the list's expressions
# cannot be joined into one.
echo "mutants: baseline build and tests" >&2
baseline_targets=$(printf '%s\n' "${all_targets[@]}" | sort -u | tr '\n' ' ')
while IFS= read -r regex; do
  if ! run_tests "$baseline_targets" "$regex"; then
    echo "mutants: the unmutated tree fails $regex; see $scratch/build.log and $scratch/test.log" >&2
    exit 2
  fi
done < <(printf '%s\n' "${all_tests[@]}" | sort -u)

printf '| mutant | file | tests | result |\n|---|---|---|---|\n'
caught=0 survived=0 excused=0 broken=0
for i in "${!ids[@]}"; do
  wanted "${ids[$i]}" || continue
  f="$tree/${files[$i]}"
  cp "$f" "$scratch/original"
  if ! substitute "$f" "${froms[$i]}" "${tos[$i]}"; then
    result="stale (pattern not found)"
    broken=$((broken + 1))
  else
    status=0
    run_tests "${targets[$i]}" "${tests[$i]}" || status=$?
    case "$status" in
      1) result="caught" && caught=$((caught + 1)) ;;
      2) result="does not compile" && broken=$((broken + 1)) ;;
      3) result="no test matches" && broken=$((broken + 1)) ;;
      *)
        if [ -n "${harmless[$i]}" ]; then
          result="survived, harmless: ${harmless[$i]}" && excused=$((excused + 1))
        else
          result="SURVIVED" && survived=$((survived + 1))
        fi
        ;;
    esac
  fi
  # A plain copy gives the restored file a new time, so the next build recompiles it.
  cp "$scratch/original" "$f"
  # A markdown table row; a | inside a regular expression would end the cell.
  printf '| %s | %s | `%s` | %s |\n' "${ids[$i]}" "${files[$i]}" "${tests[$i]//|/\\|}" "$result"
done
echo
echo "mutants: $caught caught, $excused survived as harmless, $survived survived, $broken broken"
[ "$survived" -eq 0 ] && [ "$broken" -eq 0 ]
