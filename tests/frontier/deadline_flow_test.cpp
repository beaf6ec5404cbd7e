// The fast end's LP solved as a min-cost flow (DeadlineFlow) against DeadlineModel's LP
// relaxation of the same problem by CLP: the same optimum at every deadline, the same verdict on
// deadlines no plan meets, durations within the deadline, and the solver's fast-end plans within
// theirs.
#include "deadline_flow.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>

#include "kareus/frontier/deadline_model.hpp"
#include "kareus/frontier/stage_profile.hpp"
#include "problems.hpp"

namespace kareus::frontier {
namespace {

using namespace test;

// Longest path with these durations (and the transfer on every edge between stages).
double makespan(const PipelineProblem& p, const std::vector<double>& durations) {
  std::vector<double> finish(p.dag.nodes.size(), 0.0);
  std::vector<std::vector<int>> preds(p.dag.nodes.size());
  for (const auto& [from, to] : p.dag.edges) preds[to].push_back(from);
  double longest = 0;
  for (int v : p.dag.topological_order()) {
    double start = 0;
    for (int u : preds[v])
      start = std::max(
          start,
          finish[u] + (p.dag.nodes[u].stage != p.dag.nodes[v].stage ? p.transfer.value() : 0.0));
    finish[v] = start + durations[v];
    longest = std::max(longest, finish[v]);
  }
  return longest;
}

PipelineProblem random_problem(Rng& rng, int trial) {
  const int stages = static_cast<int>(rng.integer(1, 4));
  const int microbatches = static_cast<int>(rng.integer(1, 6));
  const double p_blocking = rng.uniform(0.0, 5.0);
  auto p = trial % 3 == 0 ? make_problem(stages, microbatches, trial % 2 == 0, p_blocking,
                                         [&] { return convex_unit_options(rng, p_blocking, 8); })
                          : make_problem(stages, microbatches, trial % 2 == 0, p_blocking,
                                         [&] { return dvfs_like_options(rng, 12); });
  if (trial % 4 == 1) p.transfer = Seconds(rng.uniform(0.0, 0.5));
  return p;
}

// Solves both at deadlines low + f (high - low), in this order (tighter and looser than the
// previous one, so CLP's warm resolves and the flow's arc updates both go both ways), checking
// the flow's answer against CLP's; returns how many deadlines had a plan.
int compare_at_deadlines(const PipelineProblem& p, std::initializer_list<double> fractions,
                         const std::string& name) {
  const int n = static_cast<int>(p.dag.nodes.size());
  std::vector<double> fastest(n), slowest(n);
  for (int v = 0; v < n; ++v) {
    const auto& set = p.option_sets[p.option_set_of[v]];
    fastest[v] = slowest[v] = set.front().time.value();
    for (const auto& o : set) {
      fastest[v] = std::min(fastest[v], o.time.value());
      slowest[v] = std::max(slowest[v], o.time.value());
    }
  }
  const double low = makespan(p, fastest), high = makespan(p, slowest);
  DeadlineModel reference(p, true);
  DeadlineFlow flow(p);
  int solved = 0;
  for (double f : fractions) {
    const double deadline = low + f * (high - low);
    reference.set_deadline(Seconds(deadline));
    flow.set_deadline(Seconds(deadline));
    const auto want = reference.relaxed_durations();
    const auto got = flow.relaxed_durations();
    const auto where = name + " at " + std::to_string(f);
    EXPECT_EQ(got.has_value(), want.has_value()) << where;
    if (!got || !want) continue;
    ++solved;
    const double objective = reference.relaxed_objective();
    EXPECT_NEAR(flow.objective(), objective, 1e-9 * std::max(1.0, std::fabs(objective))) << where;
    EXPECT_LE(makespan(p, *got), deadline * (1 + 1e-9)) << where;
    for (int v = 0; v < n; ++v) {
      EXPECT_GE((*got)[v], fastest[v] * (1 - 1e-9)) << where;
      EXPECT_LE((*got)[v], slowest[v] * (1 + 1e-9)) << where;
    }
  }
  return solved;
}

TEST(DeadlineFlow, SameOptimumAsClpOnRandomDags) {
  Rng rng(61);
  int solved = 0;
  for (int trial = 0; trial < 80; ++trial)
    solved += compare_at_deadlines(random_problem(rng, trial),
                                   {0.0, 0.3, 0.05, 1.2, -0.01, 0.6, 0.01, 0.002},
                                   "trial " + std::to_string(trial));
  EXPECT_GE(solved, 480);  // of 640: the deadline below the fastest plan has none
}

// The shipped A40 profiles at the blocking power the benchmarks use: the fast end's range (the
// first few percent above the fastest time) densely, then across the frontier.
TEST(DeadlineFlow, SameOptimumAsClpOnTheA40Profiles) {
  int solved = 0;
  for (const std::string name : {"gpt3-175b+a40_bf16.csv", "bloom+a40_bf16.csv"}) {
    const auto profile =
        read_stage_profile(std::string(KAREUS_TEST_DATA_DIR) + "/frontier/" + name);
    for (int microbatches : {1, 3, 8}) {
      const auto p = pipeline_problem(profile, microbatches, Watts(70.38));
      solved += compare_at_deadlines(
          p, {0.0, 0.001, 0.003, 0.01, 0.02, 0.005, 0.05, 0.2, 0.5, 1.0, -0.001},
          name + " x " + std::to_string(microbatches));
    }
  }
  EXPECT_EQ(solved, 60);  // all but the deadline below the fastest plan
}

// Per deadline (fastest makespan x each factor), the durations of every pivot rule; counts the
// solves whose durations differ from the default rule's.
int rules_that_differ(const PipelineProblem& p, std::initializer_list<double> factors,
                      const std::string& name) {
  std::vector<double> fastest(p.dag.nodes.size());
  for (std::size_t v = 0; v < fastest.size(); ++v) {
    const auto& set = p.option_sets[p.option_set_of[v]];
    fastest[v] = std::min_element(set.begin(), set.end(), [](const auto& a, const auto& b) {
                   return a.time < b.time;
                 })->time.value();
  }
  int differ = 0;
  for (double factor : factors) {
    const Seconds deadline(makespan(p, fastest) * factor);
    std::optional<std::vector<double>> first;
    for (auto rule :
         {FlowPivotRule::block_search, FlowPivotRule::first_eligible, FlowPivotRule::best_eligible,
          FlowPivotRule::candidate_list, FlowPivotRule::altering_list}) {
      DeadlineFlow flow(p, rule);
      flow.set_deadline(deadline);
      const auto durations = flow.relaxed_durations();
      EXPECT_TRUE(durations.has_value()) << name;
      if (!durations) continue;
      if (!first) first = durations;
      differ += *durations != *first;
    }
  }
  return differ;
}

// The durations are those of the earliest optimal times, one optimum: every pivot rule (each
// ends at its own vertex of this very degenerate LP) gives the same, bit for bit.
TEST(DeadlineFlow, DurationsDoNotDependOnThePivotRule) {
  Rng rng(62);
  int differ = 0;
  for (int trial = 0; trial < 40; ++trial)
    differ += rules_that_differ(random_problem(rng, trial), {1.0, 1.02, 1.1},
                                "trial " + std::to_string(trial));
  for (const std::string name : {"gpt3-175b+a40_bf16.csv", "bloom+a40_bf16.csv"}) {
    const auto profile =
        read_stage_profile(std::string(KAREUS_TEST_DATA_DIR) + "/frontier/" + name);
    differ +=
        rules_that_differ(pipeline_problem(profile, 6, Watts(70.38)), {1.0, 1.002, 1.01}, name);
  }
  EXPECT_EQ(differ, 0);
}

// The solver's fast-end plans (after the min-cut steps and the fastest plan, see
// PipelineSolver::fast_end) each meet their deadline: from the fastest plan's time, evenly spaced
// up to the fastest step's, at most kFastEndDeadlines of them.
TEST(DeadlineFlow, SolverFastEndPlansMeetTheirDeadlines) {
  Rng rng(52);
  int checked = 0;
  for (int trial = 0; trial < 30; ++trial) {
    const auto p =
        make_problem(static_cast<int>(rng.integer(2, 4)), static_cast<int>(rng.integer(3, 8)), true,
                     rng.uniform(0.0, 5.0), [&] { return dvfs_like_options(rng, 12); });
    PipelineSolverOptions options;
    options.unit_time = Seconds(0.5);
    options.polish_points = 0;
    const auto result = solve_pipeline(p, options);
    const auto steps = static_cast<std::uint32_t>(result.summary.steps);
    const double fastest_step = evaluate_plan(p, result.assignment(steps)).time.value();
    const double fastest = evaluate_plan(p, result.assignment(steps + 1)).time.value();
    const int deadlines = static_cast<int>(std::min<double>(
        kFastEndDeadlines, std::ceil((fastest_step - fastest) / options.unit_time.value())));
    ASSERT_EQ(result.summary.fast_end_plans, fastest_step > fastest ? deadlines : 0);
    for (int k = 0; k < result.summary.fast_end_plans; ++k) {
      const double deadline = fastest + (fastest_step - fastest) * k / deadlines;
      const auto plan = result.assignment(steps + 2 + static_cast<std::uint32_t>(k));
      EXPECT_LE(evaluate_plan(p, plan).time.value(), deadline * (1 + 1e-9))
          << "trial " << trial << " k " << k;
      ++checked;
    }
  }
  EXPECT_GE(checked, 150);
}

}  // namespace
}  // namespace kareus::frontier
