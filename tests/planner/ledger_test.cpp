// SPDX-License-Identifier: Apache-2.0
// Every frontier point's ledger (planner/ledger.hpp) replays the plan on the noise-free emulator:
// its parts add up to the point the planner reports, for every method, and its time parts to the
// GPUs' time.
#include <gtest/gtest.h>

#include "common/workloads.hpp"
#include "kareus/planner/ledger.hpp"

namespace kareus::planner {
namespace {

TEST(PlanLedger, EveryFrontierPointsLedgerAddsUpToItsEnergyForEveryMethod) {
  for (const auto& w : {kareus::testing::llama3b(8, 1), kareus::testing::llama3b(4, 2)}) {
    PlanOptions o;
    o.methods = {Method::kMegatron, Method::kPerseus, Method::kNanobatchPerseus, Method::kKareus};
    const PlanResult plan = planner::plan(w, o);
    for (const auto& [method, m] : plan.methods) {
      SCOPED_TRACE(to_string(method));
      const auto ledgers = frontier_ledgers(w, m);
      ASSERT_EQ(ledgers.size(), m.frontier.size());
      for (std::size_t i = 0; i < ledgers.size(); ++i) {
        const IterationPoint& p = m.frontier[i];
        // Kareus composes partitions measured apart through the measurement protocol; the
        // replay runs the instructions whole.
        EXPECT_NEAR(ledgers[i].total().value(), p.energy.value(), 2e-3 * p.energy.value())
            << "plan " << p.plan;
        EXPECT_NEAR(ledgers[i].gpu_time().value(), p.time.value() * w.total_gpus(),
                    1e-9 * p.time.value() * w.total_gpus());
        EXPECT_GE(ledgers[i].wait_time.value(), 0.0);
      }
    }
  }
}

}  // namespace
}  // namespace kareus::planner
