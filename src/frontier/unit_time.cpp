// SPDX-License-Identifier: Apache-2.0
#include "kareus/frontier/unit_time.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "kareus/core/error.hpp"

namespace kareus::frontier {

Seconds longest_option_time(const PipelineProblem& problem) {
  Seconds longest(0);
  for (const auto& set : problem.option_sets)
    for (const auto& option : set) longest = std::max(longest, option.time);
  return longest;
}

void require_unit_time(Seconds unit, Seconds smallest, std::string_view where,
                       std::string_view name, double scale) {
  if (!std::isfinite(smallest.value()) || unit >= smallest) return;
  // Six digits undo the unit conversion's rounding (1e-6 ms, not 1.0000000000000002e-06); the
  // smallest is rounded up to two, so that the value printed is itself allowed.
  const double typed = smallest.value() * scale;
  const int exponent = static_cast<int>(std::floor(std::log10(typed)));
  const double step = std::pow(10.0, exponent - 1);
  const double allowed = std::ceil(typed / step) * step;
  // Plain digits where they stay short (0.0052, 41), an exponent beyond (1.1e+20).
  const std::string shown = exponent <= 6
                                ? fmt::format("{:.{}f}", allowed, std::max(0, 1 - exponent))
                                : fmt::format("{:.2g}", allowed);
  require(false, where, name, fmt::format("{:.6g}", unit.value() * scale),
          fmt::format("the pipeline solver takes one step per time unit of the iteration, at "
                      "most {}; this job needs at least {}",
                      kMaxPipelineSolverSteps, shown));
}

}  // namespace kareus::frontier
