# SPDX-License-Identifier: Apache-2.0
# Sourced by scripts that report what a step cost: children_cpu sets $cpu to the CPU seconds
# (user + sys) of every finished child of the sourcing shell so far, from bash's `times`, run in
# that shell (a subshell's count starts at zero). The difference of two calls is the CPU time of
# what ran between them, compilers included.
children_cpu_file=$(mktemp)
trap 'rm -f "$children_cpu_file"' EXIT
children_cpu() {
  times >"$children_cpu_file"
  cpu=$(awk 'END { s = 0; for (i = 1; i <= 2; i++) { split($i, t, "m");
                     s += t[1] * 60 + substr(t[2], 1, length(t[2]) - 1) } printf "%.0f", s }' \
    "$children_cpu_file")
}
