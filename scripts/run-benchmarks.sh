#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every benchmark in <build>/bench: Google Benchmark binaries (speed) and quality benchmarks
# that print markdown tables. Output goes to stdout and to <build>/bench-results/<name>.txt.
set -euo pipefail
build="${1:-build}"
out="$build/bench-results"
mkdir -p "$out"
status=0
for bin in "$build"/bench/bench_*; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  echo "== $name" >&2
  if ! "$bin" 2>&1 | tee "$out/$name.txt"; then
    echo "benchmark $name failed" >&2
    status=1
  fi
done
exit $status
