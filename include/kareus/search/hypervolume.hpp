// SPDX-License-Identifier: Apache-2.0
// Exact two-objective hypervolume and Pareto filtering, both objectives minimised. The search
// needs these on every batch for every candidate, so they work on plain coordinate pairs.
#pragma once

#include <cstddef>
#include <vector>

namespace kareus::search {

struct Point2 {
  double x = 0.0;
  double y = 0.0;
};

// Area dominated by `points` and bounded by `reference`; points not strictly better than the
// reference in both coordinates contribute nothing.
double hypervolume_2d(const std::vector<Point2>& points, Point2 reference);

// Indices of the non-dominated points, sorted by increasing x. Of duplicates, the first is kept.
std::vector<std::size_t> pareto_indices(const std::vector<Point2>& points);

// A Pareto front sorted by x, prepared to answer "how much would this point add" quickly.
class Front2 {
 public:
  Front2(const std::vector<Point2>& points, Point2 reference);
  double hypervolume() const { return hypervolume_; }
  // HV(front + p) - HV(front).
  double improvement(Point2 p) const;

 private:
  std::vector<Point2> front_;  // x increasing, y decreasing
  Point2 reference_;
  double hypervolume_ = 0.0;
};

}  // namespace kareus::search
