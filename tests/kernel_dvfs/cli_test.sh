#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
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

expect_rejected "column 'time_s' = -0.002: expected a duration > 0 and at most 3600 seconds" \
  --kernel-profile "$DATA/bad_negative_duration.csv"
expect_rejected "missing required column 'energy_j'" --kernel-profile "$DATA/bad_missing_column.csv"
expect_rejected "column 'clock_mhz' = 1300: unknown clock" --kernel-profile "$DATA/bad_unknown_clock.csv"
expect_rejected "--slowdown = 0.6x" --kernel-profile "$DATA/small_profile.csv" --slowdown 0.6x
expect_rejected "--reference governor needs the GPU's power limit" \
  --kernel-profile "$DATA/small_profile.csv" --reference governor
expect_rejected "--trace-clock = 1666: unknown clock" --trace "$DATA/gpt_layer_trace.json" \
  --trace-clock 1666 --gpu rtx3080ti
expect_rejected "/traceEvents/0/dur = -4.0: a kernel duration must be > 0" \
  --trace "$DATA/bad_trace_negative_dur.json" --trace-clock 1665 --gpu rtx3080ti
expect_rejected "/traceEvents/0/dur: required field is missing" \
  --trace "$DATA/bad_trace_missing_dur.json" --trace-clock 1665 --gpu rtx3080ti
expect_rejected "give exactly one input" --kernel-profile "$DATA/small_profile.csv" --model gpt3-xl
rm -f /tmp/kdvfs_err.$$

trace=$("$KAREUS" kernel-dvfs --trace "$DATA/gpt_layer_trace.json" --trace-clock 1665 \
  --gpu rtx3080ti --ideal --json) || { echo "FAIL: --trace run"; exit 1; }
printf '%s' "$trace" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert any("only 1665 MHz was measured" in n for n in d["notes"]), d["notes"]
assert d["kernels"] == 35 and d["mode"] == "ideal"
' || { echo "FAIL: --trace document"; failures=$((failures + 1)); }

json=$("$KAREUS" kernel-dvfs --kernel-profile "$DATA/small_profile.csv" --slowdown 0.6% 5% \
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

# The flags renamed in this release still work, with the same result and one line naming the new.
old=$("$KAREUS" kernel-dvfs --trace "$DATA/gpt_layer_trace.json" --trace-clock-mhz 1665 \
  --gpu rtx3080ti --ideal --json 2>/tmp/kdvfs_old.$$) || { echo "FAIL: --trace-clock-mhz run"; exit 1; }
[ "$old" = "$trace" ] || { echo "FAIL: --trace-clock-mhz differs from --trace-clock"; failures=$((failures + 1)); }
grep -q -- "--trace-clock-mhz is deprecated.*use --trace-clock" /tmp/kdvfs_old.$$ ||
  { echo "FAIL: no deprecation line for --trace-clock-mhz"; failures=$((failures + 1)); }
"$KAREUS" kernel-dvfs --profile "$DATA/small_profile.csv" --json >/dev/null 2>/tmp/kdvfs_old.$$ ||
  { echo "FAIL: --profile run"; failures=$((failures + 1)); }
grep -q -- "--profile is deprecated.*use --kernel-profile" /tmp/kdvfs_old.$$ ||
  { echo "FAIL: no deprecation line for --profile"; failures=$((failures + 1)); }
rm -f /tmp/kdvfs_old.$$

[ "$failures" -eq 0 ]
