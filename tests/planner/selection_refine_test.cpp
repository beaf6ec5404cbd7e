// SPDX-License-Identifier: Apache-2.0
// A deadline selection with milp_nodes (Selection::milp_nodes): after the polish, the plan the
// deadline picks is refined by CBC and replaced when that costs the job less. The refined plan
// must meet the deadline, never cost more than the polished one, be the plan the schedule replays,
// be the same whether the selection went to plan() or came after it, and be cheaper somewhere
// (which fails when the refinement is skipped).
#include <gtest/gtest.h>

#include <string>

#include "common/workloads.hpp"
#include "kareus/core/error.hpp"
#include "kareus/planner/planner.hpp"
#include "kareus/planner/request.hpp"
#include "kareus/planner/selection.hpp"
#include "plan_perseus.hpp"

namespace kareus::planner {
namespace {

Selection deadline(double seconds, int milp_nodes) {
  Selection s{SelectionRule::kDeadline, seconds};
  s.milp_nodes = milp_nodes;
  return s;
}

TEST(SelectionRefine, ARefinedPlanMeetsItsDeadlineIsNeverCostlierAndIsCheaperSomewhere) {
  const auto w = kareus::testing::llama3b(8, 1);
  const auto free = plan_perseus(w, {});
  int improved = 0;
  for (double fraction : {0.0, 0.02, 0.1, 0.25, 0.5, 0.75}) {
    const double bound = time_across(free.methods.at(Method::kPerseus), fraction);
    const auto polished = plan_perseus(w, deadline(bound, 0));
    const auto refined = plan_perseus(w, deadline(bound, 10));
    const auto& p = polished.methods.at(Method::kPerseus);
    const auto& r = refined.methods.at(Method::kPerseus);
    const auto& before = select(p, deadline(bound, 0));
    const auto& after = select(r, deadline(bound, 10));
    EXPECT_LE(after.time, Seconds(bound)) << "deadline " << bound;
    EXPECT_LE(after.energy, before.energy) << "deadline " << bound;
    // The point is its plan's real cost, as the schedule replays it from the solver (the solver's
    // own points sum in another order: a few ulps).
    const auto cost = frontier::evaluate_plan(r.problem, r.solver.assignment(after.plan));
    const IterationPoint replayed = r.job.point({cost.time, cost.energy});
    EXPECT_NEAR(replayed.time.value(), after.time.value(), 1e-12 * after.time.value());
    EXPECT_NEAR(replayed.energy.value(), after.energy.value(), 1e-12 * after.energy.value());
    // Recorded for this selection only, and improved exactly when the point got cheaper.
    ASSERT_TRUE(r.refinement.has_value());
    const auto& record = *r.refinement;
    EXPECT_EQ(record.selection, deadline(bound, 10));
    EXPECT_EQ(record.improved, after.energy < before.energy) << "deadline " << bound;
    EXPECT_FALSE(record.time_capped);
    EXPECT_FALSE(p.refinement.has_value());
    EXPECT_EQ(select_polished(r, deadline(bound, 10)).refinement->improved, record.improved);
    improved += record.improved;
  }
  EXPECT_GT(improved, 0);
}

// The C API's and Python's select refine as plan() does: the same point and plan, and the
// result they read unchanged.
TEST(SelectionRefine, SelectingAfterPlanGivesThePlanThatPlanningForTheSelectionGives) {
  const auto w = kareus::testing::llama3b(8, 1);
  const auto free = plan_perseus(w, {});
  const auto& m = free.methods.at(Method::kPerseus);
  const double bound = time_across(m, 0.25);
  const Selection selection = deadline(bound, 10);
  const auto planned = plan_perseus(w, selection);
  const auto& p = planned.methods.at(Method::kPerseus);
  const std::size_t size = m.frontier.size();
  const SelectedPlan unrefined = select_polished(m, deadline(bound, 0));
  const SelectedPlan after = select_polished(m, selection);
  const IterationPoint& expected = select(p, selection);
  EXPECT_EQ(after.point.time, expected.time);
  EXPECT_EQ(after.point.energy, expected.energy);
  EXPECT_EQ(after.assignment, p.solver.assignment(expected.plan));
  EXPECT_LE(after.point.energy, unrefined.point.energy);
  EXPECT_FALSE(unrefined.refinement.has_value());
  ASSERT_TRUE(after.refinement.has_value());
  EXPECT_EQ(after.refinement->improved, p.refinement->improved);
  EXPECT_EQ(m.frontier.size(), size);
  EXPECT_FALSE(m.refinement.has_value());
}

TEST(SelectionRefine, ANegativeNodeLimitOrOneWithoutADeadlineIsRefused) {
  const auto w = kareus::testing::llama3b(8, 1);
  const auto free = plan_perseus(w, {});
  const auto& m = free.methods.at(Method::kPerseus);
  const auto refused = [&](const Selection& s, const std::string& allowed) {
    try {
      select_polished(m, s);
      ADD_FAILURE() << "accepted " << s.describe() << " with milp_nodes " << s.milp_nodes;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
      EXPECT_NE(std::string(e.what()).find("milp_nodes = " + std::to_string(s.milp_nodes)),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find(allowed), std::string::npos) << e.what();
    }
  };
  refused(deadline(m.fastest().time.value() * 1.1, -1), "node count >= 0");
  Selection budget{SelectionRule::kEnergyBudget, m.fastest().energy.value()};
  budget.milp_nodes = 5;
  refused(budget, "give a deadline");
  Selection fastest;
  fastest.milp_nodes = 5;
  refused(fastest, "give a deadline");

  // The request spells the field as its front end does, and plan() refuses the options alike.
  PlanRequest request;
  request.where = "command line";
  request.spellings = {{"milp_nodes", {"--milp-nodes"}}};
  request.selection = deadline(5, -2);
  EXPECT_THROW(
      {
        try {
          request.check(w);
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("command line: --milp-nodes = -2"),
                    std::string::npos)
              << e.what();
          throw;
        }
      },
      Error);
  EXPECT_THROW(plan_perseus(w, budget), Error);
}

TEST(SelectionRefine, TheRequestCarriesTheNodeLimitThroughItsJson) {
  PlanRequest request;
  request.selection = deadline(5, 10);
  const Json j = request.to_json();
  EXPECT_EQ(j.at("milp_nodes").get<int>(), 10);
  const auto doc = JsonDocument::parse(j.dump(), "request.json");
  EXPECT_EQ(PlanRequest::from_json(doc.root()).selection, request.selection);
  const auto negative = JsonDocument::parse(R"({"deadline_s": 5, "milp_nodes": -1})", "r.json");
  EXPECT_THROW(PlanRequest::from_json(negative.root()), Error);
  // Left out when off, so a request without it writes what it always wrote.
  EXPECT_FALSE(PlanRequest{}.to_json().contains("milp_nodes"));
}

}  // namespace
}  // namespace kareus::planner
