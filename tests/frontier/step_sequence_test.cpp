// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cmath>

#include "kareus/core/error.hpp"
#include "kareus/frontier/step_sequence.hpp"
#include "random_step_sequences.hpp"

namespace kareus::frontier {
namespace {

using testing::fastest_total;
using testing::random_steps;
using testing::random_switch_cost;

// With whole-millisecond times and a 1 ms quantum the quantised problem is the true problem, so the
// DP must reproduce the exhaustive optimum exactly.
void expect_exact(bool with_switching) {
  Rng rng(with_switching ? 11 : 7);
  for (int trial = 0; trial < 150; ++trial) {
    const auto n = static_cast<std::size_t>(rng.integer(1, 5));
    const auto clocks = static_cast<std::size_t>(rng.integer(1, 4));
    const auto steps = random_steps(rng, n, clocks, true);
    const SwitchCost switching =
        with_switching ? random_switch_cost(rng, clocks, true) : SwitchCost{};
    const Seconds budget = fastest_total(steps) + milliseconds(rng.uniform(0, 20));
    SequenceBudget options;
    options.time_budget = budget;
    options.quantum = milliseconds(1);
    const SequencePlan plan = plan_min_energy(steps, switching, options);
    const auto brute = testing::brute_force(steps, switching, budget);
    ASSERT_EQ(plan.feasible, brute.feasible) << "trial " << trial;
    if (!brute.feasible) continue;
    EXPECT_NEAR(plan.cost.energy.value(), brute.energy, 1e-9) << "trial " << trial;
    EXPECT_LE(plan.cost.time.value(), budget.value() + 1e-12) << "trial " << trial;
  }
}

TEST(Planner, EqualsBruteForceWithoutSwitchCost) {
  expect_exact(false);
}

TEST(Planner, EqualsBruteForceWithSwitchCost) {
  expect_exact(true);
}

// With real-valued times the DP is conservative: never over budget, and at least as good as the
// exhaustive optimum under the budget shrunk by the reported quantisation loss.
TEST(Planner, RealTimesStayWithinBudgetAndQuantisationLoss) {
  Rng rng(3);
  for (int trial = 0; trial < 150; ++trial) {
    const auto n = static_cast<std::size_t>(rng.integer(1, 5));
    const auto clocks = static_cast<std::size_t>(rng.integer(2, 4));
    const auto steps = random_steps(rng, n, clocks, false);
    const SwitchCost switching = trial % 2 ? random_switch_cost(rng, clocks, false) : SwitchCost{};
    SequenceBudget options;
    options.time_budget = fastest_total(steps) + milliseconds(rng.uniform(0, 15));
    options.time_bins = 50;
    const SequencePlan plan = plan_min_energy(steps, switching, options);
    const auto exact = testing::brute_force(steps, switching, options.time_budget);
    const auto shrunk =
        testing::brute_force(steps, switching, options.time_budget - plan.quantisation_loss);
    if (!plan.feasible) {
      EXPECT_FALSE(shrunk.feasible) << "trial " << trial;
      continue;
    }
    EXPECT_LE(plan.cost.time.value(), options.time_budget.value() * (1 + 1e-12));
    EXPECT_GE(plan.cost.energy.value(), exact.energy - 1e-9);
    if (shrunk.feasible) {
      EXPECT_LE(plan.cost.energy.value(), shrunk.energy + 1e-9);
    }
  }
}

TEST(Planner, FixedQuantumIsMonotoneInBudget) {
  Rng rng(5);
  const auto steps = random_steps(rng, 12, 6, true);
  const SwitchCost switching = random_switch_cost(rng, 6, true);
  double previous = std::numeric_limits<double>::infinity();
  for (int extra = 0; extra <= 60; extra += 3) {
    SequenceBudget options;
    options.time_budget = fastest_total(steps) + milliseconds(extra);
    options.quantum = milliseconds(1);
    const SequencePlan plan = plan_min_energy(steps, switching, options);
    if (!plan.feasible) continue;
    EXPECT_LE(plan.cost.energy.value(), previous + 1e-12);
    previous = plan.cost.energy.value();
  }
}

TEST(Planner, ChargesEachSwitchItsLatencyAndEnergy) {
  // Two steps whose cheap options are on different clocks; the switch costs 2 ms at 50 W.
  std::vector<Step> steps{
      {"a", {{0, milliseconds(4), Joules(1.0)}, {1, milliseconds(5), Joules(0.5)}}},
      {"b", {{0, milliseconds(5), Joules(0.5)}, {1, milliseconds(4), Joules(1.0)}}}};
  const SwitchCost switching = uniform_switch_cost(2, milliseconds(2), Watts(50));
  const std::vector<std::size_t> cheap{1, 0};
  const SequenceCost cost = evaluate_choice(steps, cheap, switching);
  EXPECT_EQ(cost.switches, 1u);
  EXPECT_NEAR(cost.time.value(), 0.012, 1e-12);
  EXPECT_NEAR(cost.energy.value(), 1.0 + 0.1, 1e-12);

  SequenceBudget options;
  options.quantum = milliseconds(1);
  options.time_budget = milliseconds(11);  // room for the slow options but not for the switch
  const SequencePlan plan = plan_min_energy(steps, switching, options);
  ASSERT_TRUE(plan.feasible);
  EXPECT_EQ(plan.cost.switches, 0u);
  EXPECT_NEAR(plan.cost.energy.value(), 1.5, 1e-12);

  options.initial_clock = 0;  // starting at clock 0, choosing clock 1 first costs a switch
  const SequencePlan from_zero = plan_min_energy(steps, switching, options);
  ASSERT_TRUE(from_zero.feasible);
  EXPECT_EQ(from_zero.choice, (std::vector<std::size_t>{0, 0}));
}

TEST(Planner, InfeasibleWhenEvenTheFastestPlanIsTooSlow) {
  std::vector<Step> steps{{"a", {{0, milliseconds(4), Joules(1.0)}}}};
  SequenceBudget options;
  options.time_budget = milliseconds(3);
  EXPECT_FALSE(plan_min_energy(steps, SwitchCost{}, options).feasible);
}

// A budget a rounding error above the fastest plan once made the quantum so small that a slow
// option's count of quanta overflowed and came out as zero, so the slowest, cheapest plan won.
TEST(Planner, ABudgetAHairAboveTheFastestPlanAllowsOnlyTheFastest) {
  std::vector<Step> steps(2);
  for (auto& s : steps) {
    s.options = {{0, milliseconds(9), Joules(1.0)}, {1, milliseconds(4), Joules(1.4)}};
  }
  SequenceBudget options;
  // One representable step above the fastest total, as sums in different orders give.
  options.time_budget = Seconds(std::nextafter(8e-3, 1.0));
  options.time_bins = 100000;
  const SequencePlan plan = plan_min_energy(steps, SwitchCost{}, options);
  ASSERT_TRUE(plan.feasible);
  EXPECT_NEAR(plan.cost.time.value(), 8e-3, 1e-12);
  EXPECT_NEAR(plan.cost.energy.value(), 2.8, 1e-12);
}

TEST(Planner, RejectsStepsWithoutOptionsOrBadValues) {
  std::vector<Step> empty{{"a", {}}};
  SequenceBudget options;
  options.time_budget = Seconds(1);
  EXPECT_THROW(plan_min_energy(empty, SwitchCost{}, options), Error);
  std::vector<Step> negative{{"a", {{0, Seconds(-1), Joules(1)}}}};
  EXPECT_THROW(plan_min_energy(negative, SwitchCost{}, options), Error);
  std::vector<Step> off_matrix{{"a", {{3, Seconds(1), Joules(1)}}}};
  EXPECT_THROW(plan_min_energy(off_matrix, uniform_switch_cost(2, Seconds(0), Watts(1)), options),
               Error);
}

// Every vertex of the Lagrangian curve is a supported optimum, so the exact DP at that vertex's
// time must find exactly that energy; the curve must be convex and decreasing.
TEST(LagrangianCurve, VerticesAreDpOptimaAndConvex) {
  Rng rng(9);
  const auto steps = random_steps(rng, 5, 4, true);
  const auto curve = lagrangian_curve(steps);
  ASSERT_GE(curve.size(), 2u);
  for (std::size_t i = 0; i < curve.size(); ++i) {
    SequenceBudget options;
    options.time_budget = curve[i].time;
    options.quantum = milliseconds(1);
    const SequencePlan plan = plan_min_energy(steps, SwitchCost{}, options);
    ASSERT_TRUE(plan.feasible);
    EXPECT_NEAR(plan.cost.energy.value(), curve[i].energy.value(), 1e-9) << "vertex " << i;
    if (i > 0) {
      EXPECT_GT(curve[i].time, curve[i - 1].time);
      EXPECT_LT(curve[i].energy, curve[i - 1].energy);
      EXPECT_LE(curve[i].lambda, curve[i - 1].lambda);
    }
  }
  EXPECT_EQ(curve.back().lambda.value(), 0.0);
}

}  // namespace
}  // namespace kareus::frontier
