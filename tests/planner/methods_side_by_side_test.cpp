// SPDX-License-Identifier: Apache-2.0
// plan() solves the methods' pipeline frontiers side by side; each method's result must be what
// planning that method alone gives, and progress must still report the methods done in order.
#include <gtest/gtest.h>

#include <vector>

#include "common/workloads.hpp"
#include "kareus/planner/planner.hpp"

namespace kareus::planner {
namespace {

TEST(PlanMethods, SolvedSideBySideEachIsAsPlannedAlone) {
  const auto w = kareus::testing::llama3b(8, 1);
  PlanOptions together;
  together.unit_time = milliseconds(1);
  std::vector<Method> finished;
  together.on_progress = [&](const PlanProgress& p) {
    if (p.finished) finished.push_back(p.method);
  };
  const auto all = plan(w, together);
  EXPECT_EQ(finished, together.methods);
  for (Method m : together.methods) {
    PlanOptions alone;
    alone.unit_time = together.unit_time;
    alone.methods = {m};
    const auto one = plan(w, alone);
    const auto& a = all.methods.at(m).frontier;
    const auto& b = one.methods.at(m).frontier;
    ASSERT_EQ(a.size(), b.size()) << to_string(m);
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].plan, b[i].plan) << to_string(m);
      EXPECT_EQ(a[i].time, b[i].time) << to_string(m);
      EXPECT_EQ(a[i].energy, b[i].energy) << to_string(m);
    }
    EXPECT_EQ(all.methods.at(m).solver.summary.steps, one.methods.at(m).solver.summary.steps);
  }
}

}  // namespace
}  // namespace kareus::planner
