#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A CMake compiler and linker launcher that runs its command and appends one line to
# $KAREUS_COST_LOG: "<user s> <sys s> <wall s> <output>", the CPU time of the command and every
# process it started (the driver's cc1plus, as and ld), and the file it wrote (its -o). CPU time is
# what a build costs whatever else shares the machine; wall time depends on the load.
# scripts/build-cost.sh sets it up and sums the log (docs/testing.md, "Build cost").
# Usage (as the launcher): KAREUS_COST_LOG=FILE scripts/compile-time.sh COMPILER ARGS...
set -u
out=?
prev=
for arg in "$@"; do
  [ "$prev" = "-o" ] && out=$arg
  prev=$arg
done
times=$(mktemp)
/usr/bin/time -f '%U %S %e' -o "$times" "$@"
status=$?
# Relative -o paths are relative to the folder the build runs the command in.
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
echo "$(tail -n 1 "$times") $out" >>"${KAREUS_COST_LOG:?KAREUS_COST_LOG names the log}"
rm -f "$times"
exit "$status"
