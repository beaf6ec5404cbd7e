#!/usr/bin/env bash
# Gives every tracked source file an SPDX licence line: `// SPDX-License-Identifier: Apache-2.0`
# in C, C++ and CUDA files, `# SPDX-License-Identifier: Apache-2.0` in scripts, CMake and Python
# files. The line goes first, or after a `#!` line. Files that already have it are left alone, so a
# second run changes nothing. The files under tests/data/layering are fixtures that imitate the
# source tree for the layering check; they are left as they are.
#
#   scripts/spdx-headers.sh            adds the line where it is missing, names each file changed
#   scripts/spdx-headers.sh --check    changes nothing; names each file without the line, exits 1
#                                      if there is one
set -euo pipefail
cd "$(dirname "$0")/.."

readonly tag="SPDX-License-Identifier: Apache-2.0"
check=""
case "${1:-}" in
  "") ;;
  --check) check=1 ;;
  *) echo "spdx-headers: unknown option $1 (allowed: --check)" >&2; exit 2 ;;
esac

# The comment that starts a line in the file, or nothing for a file that is not source.
comment_of() {
  case "$1" in
    tests/data/layering/*) ;;
    *.cpp | *.hpp | *.h | *.c | *.cu | *.cuh | *.inc | *.hpp.in) echo "//" ;;
    *.sh | *.bash | *.py | *.cmake | *.cmake.in | */CMakeLists.txt | CMakeLists.txt) echo "#" ;;
  esac
}

missing=0
while IFS= read -r -d '' file; do
  comment=$(comment_of "$file")
  [ -n "$comment" ] || continue
  # Within the first lines only: a file that merely mentions the tag further down still lacks it.
  head -n 3 "$file" | grep -qF "$tag" && continue
  missing=$((missing + 1))
  if [ -n "$check" ]; then
    echo "spdx-headers: $file: no '$comment $tag' line" >&2
    continue
  fi
  tmp=$(mktemp "$file.spdx.XXXXXX")
  if head -n 1 "$file" | grep -q '^#!'; then
    { head -n 1 "$file"; echo "$comment $tag"; tail -n +2 "$file"; } >"$tmp"
  else
    { echo "$comment $tag"; cat "$file"; } >"$tmp"
  fi
  chmod --reference="$file" "$tmp"
  mv "$tmp" "$file"
  echo "spdx-headers: $file"
done < <(git ls-files -z)

if [ -n "$check" ] && [ "$missing" -gt 0 ]; then
  echo "spdx-headers: $missing tracked source files lack the line; run scripts/spdx-headers.sh" >&2
  exit 1
fi
exit 0
