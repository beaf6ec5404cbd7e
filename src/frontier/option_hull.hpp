// SPDX-License-Identifier: Apache-2.0
// One instruction's measured options as the pipeline solver sees them: quantised to whole time
// units, filtered to those worth running (no other option is as fast and cheaper in time-effective
// energy e - P_blocking t), and the lower convex hull of (units, effective energy) that the
// min-cut steps price durations with.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "kareus/core/units.hpp"
#include "kareus/frontier/pipeline_solver.hpp"

namespace kareus::frontier {

class OptionHull {
 public:
  OptionHull(const std::vector<ExecutionOption>& options, Watts p_blocking, Seconds unit);

  std::int64_t fastest_units() const { return ladder_.front().units; }
  std::int64_t slowest_units() const { return ladder_.back().units; }
  // The slowest kept option whose quantised time is at most `units` (its index in the input).
  int option_at(std::int64_t units) const;
  // The slowest kept option whose measured time is at most `window`, or -1 when none is.
  int slowest_within(Seconds window) const;
  // The same, but never faster than the kept option `at_least`: at_least when the slowest within
  // is faster or none is. Searches from at_least up, which is where the answer usually is.
  // Inline for its usual answer, at_least itself (the measuring pass asks once per instruction).
  int slowest_within(Seconds window, int at_least) const {
    const int k = rung_of_[at_least];
    if (k >= 0 && (k + 1 == static_cast<int>(pareto_.size()) || window < pareto_[k + 1].time))
      return at_least;
    return slowest_within_searched(window, at_least);
  }
  // The fastest measured option, which quantisation may have merged into a slower one.
  int fastest_option() const { return pareto_.front().option; }
  // Hull slope, in joules per unit, of going from `units` to units - 1 (units > fastest) and from
  // `units` to units + 1 (units < slowest): positive, and the first is never below the second.
  double shorten_cost(std::int64_t units) const;
  double lengthen_saving(std::int64_t units) const;
  double steepest_slope() const;
  // The units around `units` at which shorten_cost and lengthen_saving are both those at `units`
  // (the interior of its hull segment): [first, last], only `units` itself at a hull breakpoint.
  std::pair<std::int64_t, std::int64_t> same_slopes(std::int64_t units) const;

 private:
  struct Rung {
    std::int64_t units;
    Seconds time;
    double cost;  // time-effective energy, J
    int option;
  };
  int slowest_within_searched(Seconds window, int at_least) const;
  // Slope of the hull segment covering [units, units + 1].
  double slope_after(std::int64_t units) const;

  std::vector<Rung> pareto_;      // time strictly increasing, cost strictly decreasing
  std::vector<int> rung_of_;      // each input option's index in pareto_, -1 when not kept
  std::vector<Seconds> time_of_;  // each input option's measured time
  std::vector<Rung> ladder_;      // units strictly increasing, cost strictly decreasing
  std::vector<Rung> hull_;        // the ladder's lower convex hull
};

}  // namespace kareus::frontier
