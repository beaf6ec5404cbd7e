// SPDX-License-Identifier: Apache-2.0
// Hand-made MethodResults: frontiers given as (time s, energy J) points, for the selection and
// metric rules, which only look at the frontier.
#pragma once

#include <utility>
#include <vector>

#include "kareus/planner/planner.hpp"

namespace kareus::planner::testing {

// `points` fastest first; plan indices count down from the fastest, as the solver numbers them.
inline MethodResult hand_made(Method method, const std::vector<std::pair<double, double>>& points) {
  MethodResult m;
  m.method = method;
  for (std::size_t i = 0; i < points.size(); ++i) {
    IterationPoint p;
    p.time = Seconds(points[i].first);
    p.energy = Joules(points[i].second);
    p.dynamic_energy = Joules(points[i].second / 2);
    p.plan = static_cast<std::uint32_t>(points.size() - 1 - i);
    m.frontier.push_back(p);
  }
  return m;
}

}  // namespace kareus::planner::testing
