// SPDX-License-Identifier: Apache-2.0
#include "option_hull.hpp"

#include <algorithm>
#include <cmath>

namespace kareus::frontier {

OptionHull::OptionHull(const std::vector<ExecutionOption>& options, Watts p_blocking,
                       Seconds unit) {
  std::vector<int> order(options.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  const auto cost = [&](int i) {
    return (options[i].energy - p_blocking * options[i].time).value();
  };
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    if (options[a].time != options[b].time) return options[a].time < options[b].time;
    return cost(a) < cost(b);
  });
  rung_of_.assign(options.size(), -1);
  for (const auto& o : options) time_of_.push_back(o.time);
  for (int i : order) {
    if (!pareto_.empty() && pareto_.back().cost <= cost(i)) continue;
    rung_of_[i] = static_cast<int>(pareto_.size());
    pareto_.push_back(Rung{0, options[i].time, cost(i), i});
  }
  for (auto rung : pareto_) {
    const int i = rung.option;
    // Rounding up makes the planned duration an upper bound of the real one; the epsilon keeps
    // times that are whole units (up to floating-point error) on their unit.
    const auto units = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(std::ceil(options[i].time / unit - 1e-9)));
    // Same quantised time: the slower measured option is the cheaper one, so it replaces.
    if (!ladder_.empty() && ladder_.back().units == units) ladder_.pop_back();
    rung.units = units;
    ladder_.push_back(rung);
  }
  for (const auto& r : ladder_) {
    while (hull_.size() >= 2) {
      const auto& o = hull_[hull_.size() - 2];
      const auto& a = hull_.back();
      const double cross = static_cast<double>(a.units - o.units) * (r.cost - o.cost) -
                           (a.cost - o.cost) * static_cast<double>(r.units - o.units);
      if (cross > 0) break;
      hull_.pop_back();
    }
    hull_.push_back(r);
  }
}

int OptionHull::option_at(std::int64_t units) const {
  const auto it = std::upper_bound(ladder_.begin(), ladder_.end(), units,
                                   [](std::int64_t u, const Rung& r) { return u < r.units; });
  return std::prev(it)->option;
}

int OptionHull::slowest_within(Seconds window) const {
  const auto it = std::upper_bound(pareto_.begin(), pareto_.end(), window,
                                   [](Seconds w, const Rung& r) { return w < r.time; });
  return it == pareto_.begin() ? -1 : std::prev(it)->option;
}

int OptionHull::slowest_within_searched(Seconds window, int at_least) const {
  int k = rung_of_[at_least];
  if (k < 0) {
    const int i = slowest_within(window);
    return i < 0 || time_of_[i] < time_of_[at_least] ? at_least : i;
  }
  // at_least is rung k: the plain answer is faster than it below its time, else it is k or above.
  if (window < pareto_[k].time) return at_least;
  // A few rungs up, then a binary search over the rest.
  const int size = static_cast<int>(pareto_.size());
  for (int steps = 0; steps < 4; ++steps) {
    if (k + 1 == size || window < pareto_[k + 1].time) return pareto_[k].option;
    ++k;
  }
  const auto it = std::upper_bound(pareto_.begin() + k, pareto_.end(), window,
                                   [](Seconds w, const Rung& r) { return w < r.time; });
  return std::prev(it)->option;
}

double OptionHull::slope_after(std::int64_t units) const {
  const auto it = std::upper_bound(hull_.begin(), hull_.end(), units,
                                   [](std::int64_t u, const Rung& r) { return u < r.units; });
  const auto& left = *std::prev(it);
  return (left.cost - it->cost) / static_cast<double>(it->units - left.units);
}

double OptionHull::shorten_cost(std::int64_t units) const {
  return slope_after(units - 1);
}

double OptionHull::lengthen_saving(std::int64_t units) const {
  return slope_after(units);
}

std::pair<std::int64_t, std::int64_t> OptionHull::same_slopes(std::int64_t units) const {
  const auto it = std::upper_bound(hull_.begin(), hull_.end(), units,
                                   [](std::int64_t u, const Rung& r) { return u < r.units; });
  if (it == hull_.end() || std::prev(it)->units == units) return {units, units};
  return {std::prev(it)->units + 1, it->units - 1};
}

double OptionHull::steepest_slope() const {
  return hull_.size() < 2 ? 0.0 : slope_after(hull_.front().units);
}

}  // namespace kareus::frontier
