// SPDX-License-Identifier: Apache-2.0
// The keys of a `kareus` plan share the model-guided picks (search/shared_picks.hpp):
// under full recomputation the forward keys, whose fronts two instructions consume, draw the
// backward keys' share, and the plan stays within half of what `paper` would measure.
#include <gtest/gtest.h>

#include "common/workloads.hpp"
#include "kareus/planner/planner.hpp"
#include "kareus/search/partition_problem.hpp"
#include "kareus/search/shared_picks.hpp"
#include "kareus/store/partition_search.hpp"

namespace kareus::planner {
namespace {

TEST(SharedPicksPlan, ForwardKeysDrawBackwardKeysPicksWithinHalfOfPaper) {
  const auto w = kareus::testing::llama3b(4, 2, "h100-sxm");
  ASSERT_EQ(w.parallelism.recompute, workload::Recompute::kFull);
  PlanOptions o;
  o.methods = {Method::kKareus};
  o.seed = 1;
  const PlanResult r = plan(w, o);
  executor::EmulatorExecutor exec{emulator::Emulator(w.gpu)};
  std::size_t taken = 0, half_paper = 0, above_own_cap = 0;
  for (const auto& [key, result] : r.methods.at(Method::kKareus).key_frontiers) {
    const partition::Partition p = store::find_partition(w, key);
    const search::KareusBudget own = search::kareus_budget(search::PartitionProblem(p, exec));
    const std::size_t n = result.summary.measurements();
    taken += n;
    half_paper += search::paper_measurements(search::size_class_of(p.slots.size())) / 2;
    if (key.starts_with("bwd_")) {
      EXPECT_LE(n, own.cap - own.model) << key;
    }
    if (n > own.cap) ++above_own_cap;
  }
  EXPECT_GT(above_own_cap, 0u);
  EXPECT_LE(taken, half_paper);
}

}  // namespace
}  // namespace kareus::planner
