#!/bin/sh
# CLI contract of `kareus kernel-dvfs`: malformed inputs exit 2 with one clear line on stderr and
# nothing on stdout; --json prints one document with the documented keys.
set -u
KAREUS=$1
DATA=$2
failures=0

expect_rejected() {  # <substring of the message> <args...>
  want=$1
  shift
  out=$("$KAREUS" kernel-dvfs "$@" 2>/tmp/kdvfs_err.$$)
  rc=$?
  err=$(cat /tmp/kdvfs_err.$$)
  if [ "$rc" -ne 2 ] || [ -n "$out" ] || ! printf '%s' "$err" | grep -qF -- "$want"; then
    echo "FAIL: $* -> rc=$rc stdout='$out' stderr='$err' (wanted '$want')"
    failures=$((failures + 1))
  fi
}

expect_rejected "column 'time_s' = -0.002: expected a duration > 0 seconds" \
  --profile "$DATA/bad_negative_duration.csv"
expect_rejected "missing required column 'energy_j'" --profile "$DATA/bad_missing_column.csv"
expect_rejected "column 'clock_mhz' = 1300: unknown clock" --profile "$DATA/bad_unknown_clock.csv"
expect_rejected "--slowdown = 0.6x" --profile "$DATA/small_profile.csv" --slowdown 0.6x
expect_rejected "--reference governor needs the GPU's power limit" \
  --profile "$DATA/small_profile.csv" --reference governor
rm -f /tmp/kdvfs_err.$$

json=$("$KAREUS" kernel-dvfs --profile "$DATA/small_profile.csv" --slowdown 0.6% 5% \
  --switch-latency-ms 0.05 --json --plan) || { echo "FAIL: --json run"; exit 1; }
printf '%s' "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
for key in ("energy_saving", "slowdown", "switches", "results"):
    assert key in d, key
assert "energy_saving" in d["baselines"]["pass_level"]
assert len(d["results"]) == 2
assert d["results"][0]["slowdown_bound"] == 0.006
assert d["energy_saving"] == d["results"][0]["energy_saving"]
assert d["slowdown"] <= 0.006 + 1e-12
assert d["results"][1]["energy_saving"] >= d["results"][0]["energy_saving"]
assert len(d["results"][1]["plan"]) == d["kernels"]
' || { echo "FAIL: --json document"; failures=$((failures + 1)); }

[ "$failures" -eq 0 ]
