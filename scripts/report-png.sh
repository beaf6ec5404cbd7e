#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/report.png is the page of the README's demo plan. This runs the demo's command, as the
# README's `kareus-output` marker gives it (the docs test checks that transcript), with its files
# under BUILD_DIR/report-png, and screenshots the page in headless Chromium. The picture records
# the selected plan's method, time, energy and plan id in a PNG text chunk ("kareus-demo"), which
# --check compares with a fresh run of the demo: a picture from an older plan fails the check.
#
#   scripts/report-png.sh [BUILD_DIR]           regenerates docs/report.png (default BUILD_DIR: build)
#   scripts/report-png.sh --check [BUILD_DIR]   changes nothing; exits 1 when the picture is stale
set -euo pipefail
source_dir=$(cd "$(dirname "$0")/.." && pwd)
check=""
if [ "${1:-}" = --check ]; then
  check=1
  shift
fi
build_dir=$(realpath "${1:-$source_dir/build}")
kareus=$build_dir/apps/kareus/kareus
picture=$source_dir/docs/report.png
fail() {
  echo "report-png: $*" >&2
  exit 1
}
[ -x "$kareus" ] || fail "no $kareus; build it first (scripts/setup.sh)"

# The demo's arguments, with its outputs moved into this script's folder.
demo=$(sed -n 's/^<!-- kareus-output: kareus \(plan .*\) -->$/\1/p' "$source_dir/README.md" | head -n 1)
[ -n "$demo" ] || fail "README.md has no kareus-output marker of a kareus plan"
work=$build_dir/report-png
mkdir -p "$work"
# shellcheck disable=SC2001 # one substitution over a whole line
args=$(echo "$demo" | sed "s#build/#$work/#g")
# shellcheck disable=SC2086 # the marker's words, as the docs test splits them
(cd "$source_dir" && "$kareus" $args --quiet >/dev/null)
figures=$(python3 - "$work/demo/summary.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))["selected"]
p = s["point"]
print(f'{s["method"]} {p["time_s"]:.3f} s {p["energy_j"]:.0f} J plan {p["plan"]}')
EOF
)

# A PNG text chunk: length, type, keyword NUL text, CRC of type and data (PNG spec, section 11.3.4).
png_text() {
  python3 - "$@" <<'EOF'
import struct, sys, zlib
path, mode = sys.argv[1], sys.argv[2]
data = open(path, "rb").read()
chunks, at = [], 8
while at < len(data):
    (length,) = struct.unpack(">I", data[at:at + 4])
    kind = data[at + 4:at + 8]
    chunks.append((kind, data[at + 8:at + 8 + length]))
    at += 12 + length
if mode == "read":
    for kind, body in chunks:
        if kind == b"tEXt" and body.startswith(b"kareus-demo\0"):
            print(body.split(b"\0", 1)[1].decode())
    sys.exit(0)
body = b"kareus-demo\0" + sys.argv[3].encode()
out = bytearray(data[:8])
for kind, payload in chunks:
    if kind == b"tEXt" and payload.startswith(b"kareus-demo\0"):
        continue
    if kind == b"IEND":
        out += struct.pack(">I", len(body)) + b"tEXt" + body
        out += struct.pack(">I", zlib.crc32(b"tEXt" + body))
    out += struct.pack(">I", len(payload)) + kind + payload
    out += struct.pack(">I", zlib.crc32(kind + payload))
open(path, "wb").write(out)
EOF
}

if [ -n "$check" ]; then
  recorded=$(png_text "$picture" read)
  [ "$recorded" = "$figures" ] ||
    fail "docs/report.png shows '${recorded:-nothing recorded}', the demo gives '$figures';" \
      "run scripts/report-png.sh"
  echo "report-png: docs/report.png is the demo's plan ($figures)"
  exit 0
fi

chromium=$(command -v chromium || command -v chromium-browser) ||
  fail "no chromium (scripts/setup.sh installs it)"
"$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$work/profile" \
  --virtual-time-budget=30000 --window-size=900,720 --screenshot="$work/report.png" \
  "file://$work/demo/report.html" >"$work/chromium.log" 2>&1 ||
  { tail -n 20 "$work/chromium.log" >&2; fail "chromium failed"; }
png_text "$work/report.png" write "$figures"
cp "$work/report.png" "$picture"
echo "report-png: wrote docs/report.png ($figures)"
