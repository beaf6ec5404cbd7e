// SPDX-License-Identifier: Apache-2.0
// --enforceable clocks: which clock-only method's selected point wins, ties included.
#include <gtest/gtest.h>

#include "hand_made.hpp"
#include "kareus/planner/selection.hpp"

namespace kareus::planner {
namespace {

using testing::hand_made;

// Megatron's one point and Perseus's fastest run at the same time (Perseus at Megatron's
// clocks); Perseus's costs less energy.
PlanResult tied_in_time() {
  PlanResult plan;
  plan.methods[Method::kMegatron] = hand_made(Method::kMegatron, {{10.0, 22527}});
  plan.methods[Method::kPerseus] =
      hand_made(Method::kPerseus, {{10.0, 21845}, {10.5, 20000}, {11.0, 19000}});
  plan.methods[Method::kKareus] = hand_made(Method::kKareus, {{9.0, 20000}});
  return plan;
}

TEST(Enforceable, MaxThroughputTieInTimeGoesToTheLowerEnergy) {
  EXPECT_EQ(best_enforceable_method(tied_in_time(), Enforceable::kClocks, Selection{}),
            Method::kPerseus);
}

TEST(Enforceable, EnergyBudgetTieInTimeGoesToTheLowerEnergy) {
  EXPECT_EQ(best_enforceable_method(tied_in_time(), Enforceable::kClocks,
                                    Selection{SelectionRule::kEnergyBudget, 30000}),
            Method::kPerseus);
}

TEST(Enforceable, DeadlineTieInEnergyGoesToTheFaster) {
  PlanResult plan;
  plan.methods[Method::kMegatron] = hand_made(Method::kMegatron, {{11.0, 20000}});
  plan.methods[Method::kPerseus] = hand_made(Method::kPerseus, {{10.0, 20000}});
  EXPECT_EQ(best_enforceable_method(plan, Enforceable::kClocks,
                                    Selection{SelectionRule::kDeadline, 12.0}),
            Method::kPerseus);
  EXPECT_EQ(
      best_enforceable_method(plan, Enforceable::kAll, Selection{SelectionRule::kDeadline, 12.0}),
      Method::kPerseus);
}

TEST(Enforceable, AllowsEveryMethodUnderAll) {
  EXPECT_EQ(best_enforceable_method(tied_in_time(), Enforceable::kAll, Selection{}),
            Method::kKareus);
}

}  // namespace
}  // namespace kareus::planner
