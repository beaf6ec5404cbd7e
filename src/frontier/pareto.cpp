// SPDX-License-Identifier: Apache-2.0
#include "kareus/frontier/pareto.hpp"

#include <algorithm>
#include <cmath>
#include <queue>
#include <string>
#include <tuple>

#include "kareus/core/error.hpp"

namespace kareus::frontier {
namespace {

bool sorts_before(const ParetoPoint& a, const ParetoPoint& b) {
  return std::tie(a.time, a.energy, a.first, a.second) <
         std::tie(b.time, b.energy, b.first, b.second);
}

double slack(double value, double relative, double absolute) {
  return relative * std::fabs(value) + absolute;
}

}  // namespace

ParetoSet ParetoSet::prune_sorted(const std::vector<ParetoPoint>& sorted,
                                  const Tolerance& tolerance) {
  // The covering argument below needs value + slack(value) to grow with value.
  require(tolerance.relative >= 0.0 && tolerance.relative <= 1.0, "pareto prune",
          "relative tolerance", format_number(tolerance.relative), "must be in [0, 1]");
  require(
      tolerance.time_absolute.value() >= 0.0 && tolerance.energy_absolute.value() >= 0.0,
      "pareto prune", "absolute tolerance",
      format_number(std::min(tolerance.time_absolute.value(), tolerance.energy_absolute.value())),
      "must be >= 0");
  // Pass 1, in time order: a point is dropped when the last kept one (no slower, by the order) is
  // within its energy slack. Pass 2, backwards: a kept point is dropped when the next slower kept
  // one (which has less energy) is within its time slack. value + slack(value) grows with value, so
  // a point dropped in pass 1 stays covered after its cover is dropped in pass 2.
  std::vector<ParetoPoint> kept;
  for (const auto& p : sorted) {
    if (!kept.empty() &&
        kept.back().energy.value() <= p.energy.value() + slack(p.energy.value(), tolerance.relative,
                                                               tolerance.energy_absolute.value())) {
      continue;
    }
    kept.push_back(p);
  }
  ParetoSet result;
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) {
    if (!result.points_.empty() &&
        result.points_.back().time.value() <=
            it->time.value() +
                slack(it->time.value(), tolerance.relative, tolerance.time_absolute.value())) {
      continue;
    }
    result.points_.push_back(*it);
  }
  std::reverse(result.points_.begin(), result.points_.end());
  return result;
}

ParetoSet ParetoSet::from_points(std::vector<ParetoPoint> points, const Tolerance& tolerance) {
  std::sort(points.begin(), points.end(), sorts_before);
  return prune_sorted(points, tolerance);
}

bool ParetoSet::insert(const ParetoPoint& point) {
  // The first kept point not faster than `point`; the one before it is faster.
  auto it =
      std::lower_bound(points_.begin(), points_.end(), point,
                       [](const ParetoPoint& a, const ParetoPoint& b) { return a.time < b.time; });
  if (it != points_.begin() && std::prev(it)->energy <= point.energy) return false;
  if (it != points_.end() && it->time == point.time && it->energy <= point.energy) return false;
  auto last = it;
  while (last != points_.end() && last->energy >= point.energy) ++last;
  it = points_.erase(it, last);
  points_.insert(it, point);
  return true;
}

ParetoSet merge(const ParetoSet& a, const ParetoSet& b, const Tolerance& tolerance) {
  std::vector<ParetoPoint> all(a.points());
  all.insert(all.end(), b.begin(), b.end());
  return ParetoSet::from_points(std::move(all), tolerance);
}

ParetoSet minkowski_sum(const ParetoSet& a, const ParetoSet& b, const Tolerance& tolerance) {
  if (a.empty() || b.empty()) return {};
  // One sorted stream a[i] + b[j], j = 0.., per point of a, merged with a heap in the order
  // from_points sorts by, so the result equals pruning all pairwise sums at once.
  struct Head {
    ParetoPoint sum;
    bool operator>(const Head& o) const { return sorts_before(o.sum, sum); }
  };
  const auto sum_at = [&](std::uint32_t i, std::uint32_t j) {
    return ParetoPoint{a[i].time + b[j].time, a[i].energy + b[j].energy, i, j};
  };
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heap;
  for (std::uint32_t i = 0; i < a.size(); ++i) heap.push(Head{sum_at(i, 0)});
  // No sum has less energy than the two least-energy points together: once that is reached,
  // every later (slower) sum is dominated.
  const Joules floor_energy = a.min_energy().energy + b.min_energy().energy;
  std::vector<ParetoPoint> sorted;
  while (!heap.empty()) {
    const ParetoPoint p = heap.top().sum;
    heap.pop();
    sorted.push_back(p);
    if (p.energy <= floor_energy) break;
    if (p.second + 1 < b.size()) heap.push(Head{sum_at(p.first, p.second + 1)});
  }
  return ParetoSet::prune_sorted(sorted, tolerance);
}

ParetoSet scale(const ParetoSet& a, int count) {
  require(count >= 1, "pareto scale", "count", std::to_string(count), "must be at least 1");
  std::vector<ParetoPoint> points;
  points.reserve(a.size());
  for (std::uint32_t i = 0; i < a.size(); ++i)
    points.push_back(ParetoPoint{a[i].time * count, a[i].energy * count, i, kNoIndex});
  return ParetoSet::from_points(std::move(points));
}

}  // namespace kareus::frontier
