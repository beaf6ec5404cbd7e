// SPDX-License-Identifier: Apache-2.0
// The report's timeline re-runs a schedule on the emulator: it must take as long as the plan said
// and respect the 1F1B dependencies it draws.
#include <gtest/gtest.h>

#include <map>

#include "common/workloads.hpp"
#include "kareus/planner/planner.hpp"
#include "kareus/report/timeline.hpp"

namespace kareus::report {
namespace {

// CP2 x TP4: a gradient reduction follows the pipeline, so the timeline's tail is checked too.
TEST(Timeline, ReRunSchedulesTakeThePlannedTimeAndKeepTheirDependencies) {
  const auto w = kareus::testing::llama3b(4, 2);
  planner::PlanOptions o;
  o.methods = {planner::Method::kMegatron, planner::Method::kPerseus,
               planner::Method::kNanobatchPerseus};
  const auto plan = planner::plan(w, o);
  const int mbs = w.parallelism.microbatches;
  for (const auto& [method, result] : plan.methods) {
    for (const auto* point : {&result.fastest(), &result.min_energy()}) {
      SCOPED_TRACE(std::string(planner::to_string(method)) + " plan " +
                   std::to_string(point->plan));
      const auto schedule = planner::make_schedule(plan, method, *point);
      const auto t = emulate_timeline(w, schedule);
      EXPECT_GT(t.tail.value(), 0.0);
      EXPECT_NEAR(t.iteration_time().value(), point->time.value(), 0.01 * point->time.value());
      ASSERT_EQ(t.bars.size(), static_cast<std::size_t>(2 * w.parallelism.pp * mbs));
      std::map<std::tuple<int, int, std::string>, const TimelineBar*> by;
      std::map<int, double> stage_free;
      for (const auto& b : t.bars) {
        EXPECT_GE(b.start.value(), stage_free[b.stage]) << "a stage runs one thing at a time";
        EXPECT_GT(b.end.value(), b.start.value());
        stage_free[b.stage] = b.end.value();
        by[{b.stage, b.microbatch, b.direction}] = &b;
      }
      for (const auto& b : t.bars) {
        const int from = b.direction == "forward" ? b.stage - 1 : b.stage + 1;
        if (const auto it = by.find({from, b.microbatch, b.direction}); it != by.end()) {
          EXPECT_GT(b.start.value(), it->second->end.value()) << "waits for its neighbour";
        }
      }
      double busy = 0, waiting = 0;
      for (const auto& b : t.bars) busy += (b.end - b.start).value();
      for (const auto& g : t.gaps) waiting += (g.end - g.start).value();
      EXPECT_NEAR(busy + waiting, w.parallelism.pp * t.pipeline_time.value(), 1e-9)
          << "every stage is busy or waiting until the pipeline drains";
    }
  }
}

}  // namespace
}  // namespace kareus::report
