#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# scripts/spdx-headers.sh in a throwaway git repository: the line goes first, or after a `#!` line,
# with the comment of the file's language; untracked files, data and the layering fixtures are
# left alone; a second run changes nothing; --check fails while a file lacks the line.
# Usage: spdx_headers_test.sh SOURCE_DIR
set -euo pipefail
source_dir=$(realpath "$1")
fail() {
  echo "spdx_headers_test: $*" >&2
  exit 1
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
git init -q .
mkdir -p scripts src tests/data/layering/x python
cp "$source_dir/scripts/spdx-headers.sh" scripts/
printf '#pragma once\n' >src/a.hpp
printf '// SPDX-License-Identifier: Apache-2.0\nint x;\n' >src/done.cpp
printf '#!/usr/bin/env bash\necho hi\n' >scripts/run.sh
chmod +x scripts/run.sh
printf '"""Doc."""\n' >python/m.py
printf 'project(x)\n' >CMakeLists.txt
printf '{}\n' >data.json
printf 'int y;\n' >tests/data/layering/x/f.cpp
printf 'int z;\n' >src/untracked.cpp
git add scripts src/a.hpp src/done.cpp python CMakeLists.txt data.json tests
scripts/spdx-headers.sh --check 2>/dev/null && fail "--check passed with files lacking the line"

scripts/spdx-headers.sh >/dev/null
expect() {
  [ "$(cat "$1")" = "$(printf "$2")" ] || fail "$1 is '$(cat "$1")', expected '$(printf "$2")'"
}
tag="SPDX-License-Identifier: Apache-2.0"
expect src/a.hpp "// $tag\n#pragma once"
expect src/done.cpp "// $tag\nint x;"
expect scripts/run.sh "#!/usr/bin/env bash\n# $tag\necho hi"
[ -x scripts/run.sh ] || fail "scripts/run.sh lost its executable bit"
expect python/m.py "# $tag\n\"\"\"Doc.\"\"\""
expect CMakeLists.txt "# $tag\nproject(x)"
expect data.json "{}"
expect tests/data/layering/x/f.cpp "int y;"
expect src/untracked.cpp "int z;"

before=$(find . -path ./.git -prune -o -type f -print0 | sort -z | xargs -0 sha256sum)
[ -z "$(scripts/spdx-headers.sh)" ] || fail "a second run changed files"
after=$(find . -path ./.git -prune -o -type f -print0 | sort -z | xargs -0 sha256sum)
[ "$before" = "$after" ] || fail "a second run changed file contents"
scripts/spdx-headers.sh --check || fail "--check failed after the script ran"
echo "spdx_headers_test: passed"
