// SPDX-License-Identifier: Apache-2.0
// Plans valued again (planned_frontier.hpp): on the GPU they were planned on, the planner's own
// points, and read where they were kept for, what the whole frontier reads there.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "kareus/calibration/planned_frontier.hpp"
#include "kareus/core/paths.hpp"

namespace kareus::calibration {
namespace {

workload::Workload llama_tp8() {
  return workload::make_workload(workload::read_workload_request(
      (data_dir() / "workloads" / "llama3.2-3b_tp8_mbs8_seq4096.json").string()));
}

// Dynamic energy at `position` between the fastest and the slowest time, linearly interpolated.
double energy_at(const std::vector<planner::IterationPoint>& points, double position) {
  const Seconds t = points.front().time + (points.back().time - points.front().time) * position;
  const auto hi = std::lower_bound(points.begin(), points.end(), t,
                                   [](const auto& p, Seconds x) { return p.time < x; });
  if (hi == points.begin()) return hi->dynamic_energy.value();
  const auto lo = hi - 1;
  const double a = (t - lo->time) / (hi->time - lo->time);
  return lo->dynamic_energy.value() + a * (hi->dynamic_energy - lo->dynamic_energy).value();
}

TEST(PlannedFrontier, OnItsOwnGpuReadsAsThePlannersFrontier) {
  const workload::Workload w = llama_tp8();
  planner::PlanOptions options;
  options.methods = {planner::Method::kPerseus, planner::Method::kNanobatchPerseus,
                     planner::Method::kKareus};
  const planner::PlanResult plan = planner::plan(w, options);
  const std::vector<double> positions = {0.0, 0.13, 0.5, 0.77, 0.95, 1.0};
  for (const auto& [method, result] : plan.methods) {
    SCOPED_TRACE(planner::to_string(method));
    const auto points = PlannedFrontier(w, result, positions).on(w.gpu);
    std::map<std::uint32_t, const planner::IterationPoint*> planned;
    for (const auto& p : result.frontier) planned[p.plan] = &p;
    ASSERT_LT(points.size(), result.frontier.size());  // only what the positions need
    for (const auto& p : points) {
      ASSERT_TRUE(planned.count(p.plan)) << p.plan;
      EXPECT_NEAR(p.time.value(), planned[p.plan]->time.value(), 1e-9 * p.time.value());
      EXPECT_NEAR(p.dynamic_energy.value(), planned[p.plan]->dynamic_energy.value(),
                  1e-9 * p.dynamic_energy.value());
    }
    EXPECT_EQ(points.front().plan, result.frontier.front().plan);
    EXPECT_EQ(points.back().plan, result.frontier.back().plan);
    for (double u : positions)
      EXPECT_NEAR(energy_at(points, u), energy_at(result.frontier, u),
                  1e-9 * energy_at(result.frontier, u))
          << u;
  }
}

}  // namespace
}  // namespace kareus::calibration
