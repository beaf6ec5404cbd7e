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
// its options' selection: the same point and plan, once per selection (a second select changes
// nothing), and from the frontier as solved whatever was selected before.
TEST(SelectionPolish, SelectingAfterPlanGivesThePlanThatPlanningForTheSelectionGives) {
  const auto w = kareus::testing::llama3b(8, 1);
  auto free = plan_perseus(w, {});
  auto& m = free.methods.at(Method::kPerseus);
  const double fastest = m.fastest().time.value();
  const auto same = [](const MethodResult& a, const IterationPoint& p, const MethodResult& b,
                       const IterationPoint& q) {
    EXPECT_EQ(p.time, q.time);
    EXPECT_EQ(p.energy, q.energy);
    EXPECT_EQ(a.solver.assignment(p.plan), b.solver.assignment(q.plan));
  };
  for (const Selection selection : {Selection{SelectionRule::kDeadline, time_across(m, 0.3)},
                                    Selection{SelectionRule::kDeadline, time_across(m, 0.1)},
                                    Selection{SelectionRule::kEnergyBudget,
                                              m.frontier[m.frontier.size() / 4].energy.value()}}) {
    const auto planned = plan_perseus(w, selection);
    const auto& p = planned.methods.at(Method::kPerseus);
    const IterationPoint after = select_polished(m, selection);
    same(m, after, p, select(p, selection));
    const std::size_t size = m.frontier.size();
    same(m, select_polished(m, selection), m, after);
    EXPECT_EQ(m.frontier.size(), size);
  }
  EXPECT_THROW(select_polished(m, {SelectionRule::kDeadline, 0.5 * fastest}), Error);
}

}  // namespace
}  // namespace kareus::planner
