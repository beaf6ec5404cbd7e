// SPDX-License-Identifier: Apache-2.0
// plan() polishes the plan its options' selection will pick (frontier::polish_within): the selected
// point must meet the rule and be at least as good as the one the unpolished frontier gives, and
// the selection's schedule must be that plan.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "common/workloads.hpp"
#include "kareus/core/error.hpp"
#include "kareus/planner/planner.hpp"
#include "kareus/planner/request.hpp"
#include "kareus/planner/selection.hpp"
#include "plan_perseus.hpp"

namespace kareus::planner {
namespace {

// Whole-job time and energy of the schedule's plan, replayed from the solver.
frontier::PlanCost solver_cost(const MethodResult& m, const IterationPoint& point) {
  return frontier::evaluate_plan(m.problem, m.solver.assignment(point.plan));
}

TEST(SelectionPolish, ASelectedPlanMeetsItsBoundAndIsNeverWorseThanTheFrontiers) {
  const auto w = kareus::testing::llama3b(8, 1);
  const auto free = plan_perseus(w, {});
  const auto& unpolished = free.methods.at(Method::kPerseus);
  int cheaper = 0, faster = 0;
  for (double fraction : {0.0, 0.02, 0.1, 0.25, 0.5, 0.75}) {
    const Seconds deadline(time_across(unpolished, fraction));
    const auto selected = plan_perseus(w, {SelectionRule::kDeadline, deadline.value()});
    const auto& m = selected.methods.at(Method::kPerseus);
    const auto& point = select_by_deadline(m, deadline);
    const auto& before = select_by_deadline(unpolished, deadline);
    EXPECT_LE(point.time, deadline);
    EXPECT_LE(point.energy, before.energy) << "deadline " << deadline.value();
    cheaper += point.energy < before.energy;
    // The point is its plan's real cost: the pipeline's time plus the same tail as any point.
    EXPECT_NEAR(point.time.value() - solver_cost(m, point).time.value(),
                before.time.value() - solver_cost(unpolished, before).time.value(), 1e-9);

    const Joules budget = before.energy;
    const auto by_budget = plan_perseus(w, {SelectionRule::kEnergyBudget, budget.value()});
    const auto& within = select_by_energy_budget(by_budget.methods.at(Method::kPerseus), budget);
    EXPECT_LE(within.energy, budget);
    EXPECT_LE(within.time, before.time);
    faster += within.time < before.time;
  }
  // Measured: 5 of the 6 deadlines get a cheaper plan, 2 of the 6 budgets a faster one.
  EXPECT_GT(cheaper, 0);
  EXPECT_GT(faster, 0);
}

// A selection made after plan() (the C API's and Python's select) is polished as plan() polishes
// its options' selection: the same point and plan, from the frontier as solved whatever was
// selected before, and the result it reads stays as plan() made it.
TEST(SelectionPolish, SelectingAfterPlanGivesThePlanThatPlanningForTheSelectionGives) {
  const auto w = kareus::testing::llama3b(8, 1);
  const auto free = plan_perseus(w, {});
  const auto& m = free.methods.at(Method::kPerseus);
  const std::vector<IterationPoint> planned_frontier = m.frontier;
  const double fastest = m.fastest().time.value();
  const auto same_frontier = [&] {
    ASSERT_EQ(m.frontier.size(), planned_frontier.size());
    for (std::size_t i = 0; i < m.frontier.size(); ++i) {
      EXPECT_EQ(m.frontier[i].time, planned_frontier[i].time);
      EXPECT_EQ(m.frontier[i].energy, planned_frontier[i].energy);
      EXPECT_EQ(m.frontier[i].plan, planned_frontier[i].plan);
    }
  };
  int off_frontier = 0;
  for (const Selection selection : {Selection{SelectionRule::kDeadline, time_across(m, 0.3)},
                                    Selection{SelectionRule::kDeadline, time_across(m, 0.1)},
                                    Selection{SelectionRule::kEnergyBudget,
                                              m.frontier[m.frontier.size() / 4].energy.value()}}) {
    const auto planned = plan_perseus(w, selection);
    const auto& p = planned.methods.at(Method::kPerseus);
    const SelectedPlan after = select_polished(m, selection);
    const IterationPoint& expected = select(p, selection);
    EXPECT_EQ(after.point.time, expected.time);
    EXPECT_EQ(after.point.energy, expected.energy);
    EXPECT_EQ(after.assignment, p.solver.assignment(expected.plan));
    EXPECT_EQ(after.method, Method::kPerseus);
    // The same again: a selection depends on nothing selected before it.
    const SelectedPlan again = select_polished(m, selection);
    EXPECT_EQ(again.point.time, after.point.time);
    EXPECT_EQ(again.assignment, after.assignment);
    same_frontier();
    off_frontier += std::none_of(m.frontier.begin(), m.frontier.end(), [&](const auto& q) {
      return q.time == after.point.time && q.energy == after.point.energy;
    });
    // The schedule is the selected plan's, whether or not the frontier holds it.
    const Schedule schedule = make_schedule(free, after);
    EXPECT_EQ(schedule.predicted.iteration_time, after.point.time);
    EXPECT_EQ(schedule.predicted.energy, after.point.energy);
  }
  // A polish finds plans the frontier as solved does not hold (which fails were the frontier
  // polished in place or the selection read the unpolished frontier).
  EXPECT_GT(off_frontier, 0);
  EXPECT_THROW(select_polished(m, {SelectionRule::kDeadline, 0.5 * fastest}), Error);
}

}  // namespace
}  // namespace kareus::planner
