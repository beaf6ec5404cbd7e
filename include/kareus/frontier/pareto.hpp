// SPDX-License-Identifier: Apache-2.0
// Pareto sets over (time, energy): both are minimised. Points carry two indices instead of a
// configuration, so sets compose cheaply: a partition's frontier tags each point with the caller's
// configuration index, a Minkowski sum records the indices of the two points it added, and a chosen
// point is traced back to its configurations by following the indices into the operand sets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "kareus/core/units.hpp"

namespace kareus::frontier {

inline constexpr std::uint32_t kNoIndex = std::numeric_limits<std::uint32_t>::max();

struct ParetoPoint {
  Seconds time;
  Joules energy;
  // The caller's configuration index, or for a sum the index of the point in the left operand.
  std::uint32_t first = kNoIndex;
  // For a sum, the index of the point in the right operand; kNoIndex otherwise.
  std::uint32_t second = kNoIndex;
};

// How close a point may be to a kept one and still be dropped: q stands in for p when
// q.time <= p.time + relative * |p.time| + time_absolute and the same holds for energy.
// All zero keeps exactly the points no other point weakly dominates (one of equal duplicates).
struct Tolerance {
  double relative = 0.0;
  Seconds time_absolute{0.0};
  Joules energy_absolute{0.0};
};

class ParetoSet {
 public:
  ParetoSet() = default;
  // Prunes `points` with `tolerance`; every input point is then within tolerance of a kept one.
  static ParetoSet from_points(std::vector<ParetoPoint> points, const Tolerance& tolerance = {});

  // Adds `point` unless a kept point weakly dominates it; drops the points it dominates.
  // Returns whether it was added.
  bool insert(const ParetoPoint& point);

  // Sorted by time, strictly increasing; energy strictly decreasing.
  const std::vector<ParetoPoint>& points() const { return points_; }
  std::size_t size() const { return points_.size(); }
  bool empty() const { return points_.empty(); }
  const ParetoPoint& operator[](std::size_t i) const { return points_[i]; }
  auto begin() const { return points_.begin(); }
  auto end() const { return points_.end(); }
  const ParetoPoint& fastest() const { return points_.front(); }
  const ParetoPoint& min_energy() const { return points_.back(); }

 private:
  friend ParetoSet minkowski_sum(const ParetoSet&, const ParetoSet&, const Tolerance&);
  // Keeps a pruned subset of points already sorted by (time, energy).
  static ParetoSet prune_sorted(const std::vector<ParetoPoint>& sorted, const Tolerance& tolerance);
  std::vector<ParetoPoint> points_;
};

// The Pareto set of the union; points keep their indices.
ParetoSet merge(const ParetoSet& a, const ParetoSet& b, const Tolerance& tolerance = {});

// Pareto set of { p + q : p in a, q in b }, pruned with `tolerance`; a point's `first` is the index
// of p in a and its `second` the index of q in b. O(|a| |b| log |a|) time and O(|a| + result)
// memory: the sums are generated lazily in time order and cut off once no later sum can be kept.
ParetoSet minkowski_sum(const ParetoSet& a, const ParetoSet& b, const Tolerance& tolerance = {});

// `count` identical partitions that run the same configuration: every point's time and energy
// times `count`; `first` is the index of the point in `a`. Throws kareus::Error on count < 1.
ParetoSet scale(const ParetoSet& a, int count);

}  // namespace kareus::frontier
