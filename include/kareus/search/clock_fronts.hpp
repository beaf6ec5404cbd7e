// SPDX-License-Identifier: Apache-2.0
// What the planner's composition consumes from a partition search (Kareus §4.4): at every clock
// the Pareto set of (time, dynamic energy), summed over keys per clock. The `kareus` strategy
// searches for these per-clock fronts and stops when they no longer move.
#pragma once

#include <vector>

#include "kareus/search/hypervolume.hpp"
#include "kareus/search/problem.hpp"

namespace kareus::search {

// Every configuration split into its clock and its shape (everything else: SM count, slot).
struct ClockLayout {
  std::vector<std::size_t> clock_of;  // rank of the configuration's clock, 0 = lowest
  std::vector<std::size_t> shape_of;
  std::vector<std::vector<std::size_t>> id_at;  // [clock][shape], size() when absent
  std::size_t clocks() const { return id_at.size(); }
};
// Clock is raw feature 0 (Problem::raw_features); a shape is the rest of the raw features.
ClockLayout clock_layout(const Problem& problem);

// Per-clock Pareto fronts of measured (time, dynamic energy) points, each judged against the
// others: a point at one clock that another clock's point beats by more than `tolerance` in both
// objectives cannot reach the composed frontier (all keys move together with the clock), so it
// neither counts as moving the fronts nor earns a measurement. The tolerance leaves room for the
// other keys of an instruction, whose sum can tip the balance between two clocks.
class ClockFronts {
 public:
  ClockFronts(std::size_t clocks, double tolerance) : fronts_(clocks), tolerance_(tolerance) {}

  // Adds a point measured at `clock` and returns how far it moved what that clock can offer: the
  // relative factor by which the closest point of competition(clock) falls short of covering it
  // (0 when covered, infinity when nothing competes). The composition adds the keys' per-clock
  // fronts, so if no key's front moves by more than d, no composed front does.
  double add(std::size_t clock, Point2 point);
  // The clock's own front and the other clocks' fronts, the latter scaled by 1 + tolerance.
  std::vector<Point2> competition(std::size_t clock) const;
  const std::vector<Point2>& front(std::size_t clock) const { return fronts_[clock]; }
  std::size_t clocks() const { return fronts_.size(); }
  double tolerance() const { return tolerance_; }
  std::size_t covered() const;

 private:
  std::vector<std::vector<Point2>> fronts_;  // Pareto sets, any order
  double tolerance_;
};

}  // namespace kareus::search
