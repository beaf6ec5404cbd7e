// SPDX-License-Identifier: Apache-2.0
#include "kareus/search/clock_fronts.hpp"

#include <algorithm>
#include <limits>
#include <map>

namespace kareus::search {

ClockLayout clock_layout(const Problem& problem) {
  const std::size_t n = problem.size();
  std::vector<double> clocks;
  std::map<std::vector<double>, std::size_t> shapes;
  std::vector<std::vector<double>> rows(n);
  for (std::size_t id = 0; id < n; ++id) {
    rows[id] = problem.raw_features(id);
    clocks.push_back(rows[id].at(0));
    shapes.emplace(std::vector<double>(rows[id].begin() + 1, rows[id].end()), 0);
  }
  std::sort(clocks.begin(), clocks.end());
  clocks.erase(std::unique(clocks.begin(), clocks.end()), clocks.end());
  std::size_t next = 0;
  for (auto& [shape, index] : shapes) index = next++;
  ClockLayout layout;
  layout.id_at.assign(clocks.size(), std::vector<std::size_t>(shapes.size(), n));
  for (std::size_t id = 0; id < n; ++id) {
    const auto c = static_cast<std::size_t>(
        std::lower_bound(clocks.begin(), clocks.end(), rows[id][0]) - clocks.begin());
    const std::size_t s = shapes.at(std::vector<double>(rows[id].begin() + 1, rows[id].end()));
    layout.clock_of.push_back(c);
    layout.shape_of.push_back(s);
    layout.id_at[c][s] = id;
  }
  return layout;
}

std::vector<Point2> ClockFronts::competition(std::size_t clock) const {
  std::vector<Point2> out = fronts_.at(clock);
  for (std::size_t c = 0; c < fronts_.size(); ++c) {
    if (c == clock) continue;
    for (const Point2& q : fronts_[c])
      out.push_back({q.x * (1 + tolerance_), q.y * (1 + tolerance_)});
  }
  return out;
}

double ClockFronts::add(std::size_t clock, Point2 point) {
  double moved = std::numeric_limits<double>::infinity();
  for (const Point2& q : competition(clock)) {
    moved = std::min(moved, std::max(q.x / point.x, q.y / point.y) - 1.0);
  }
  moved = std::max(moved, 0.0);
  std::vector<Point2>& front = fronts_.at(clock);
  if (std::none_of(front.begin(), front.end(),
                   [&](const Point2& q) { return q.x <= point.x && q.y <= point.y; })) {
    std::erase_if(front, [&](const Point2& q) { return point.x <= q.x && point.y <= q.y; });
    front.push_back(point);
  }
  return moved;
}

std::size_t ClockFronts::covered() const {
  return static_cast<std::size_t>(
      std::count_if(fronts_.begin(), fronts_.end(), [](const auto& f) { return !f.empty(); }));
}

}  // namespace kareus::search
