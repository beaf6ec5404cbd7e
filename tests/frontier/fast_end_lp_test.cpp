// The fast end's LP (hull segments, start and finish columns) against DeadlineModel's
// multiple-choice LP relaxation of the same problem: the same optimum at every deadline, durations
// that meet it, and the solver's fast-end plans within their deadlines.
#include "fast_end_lp.hpp"

#include <gtest/gtest.h>

#include "kareus/frontier/deadline_model.hpp"
#include "problems.hpp"

namespace kareus::frontier {
namespace {

using namespace test;

// Longest path with these durations (and the transfer on every edge between stages).
double makespan(const PipelineProblem& p, const std::vector<double>& durations) {
  std::vector<double> finish(p.dag.nodes.size(), 0.0);
  double longest = 0;
  for (int v : p.dag.topological_order()) {
    double start = 0;
    for (const auto& [from, to] : p.dag.edges)
      if (to == v)
        start = std::max(start, finish[from] + (p.dag.nodes[from].stage != p.dag.nodes[to].stage
                                                    ? p.transfer.value()
                                                    : 0.0));
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

// Deadlines from below the fastest plan to past the least-energy one, solved in one order on both
// models, so the warm resolves are exercised (tighter and looser than the previous deadline).
TEST(FastEndLp, SameOptimumAsTheMultipleChoiceLpAndDurationsWithinTheDeadline) {
  Rng rng(51);
  int solved = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const auto p = random_problem(rng, trial);
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
    FastEndLp lp(p);
    for (double f : {0.0, 0.3, 0.05, 1.2, -0.01, 0.6, 0.01}) {
      const double deadline = low + f * (high - low);
      reference.set_deadline(Seconds(deadline));
      lp.set_deadline(Seconds(deadline));
      const auto want = reference.relaxed_durations();
      const auto got = lp.relaxed_durations();
      ASSERT_EQ(got.has_value(), want.has_value()) << "trial " << trial << " f " << f;
      if (!got) continue;
      ++solved;
      const double objective = reference.relaxed_objective();
      EXPECT_NEAR(lp.objective(), objective, 1e-9 * std::max(1.0, std::fabs(objective)))
          << "trial " << trial << " f " << f;
      EXPECT_LE(makespan(p, *got), deadline * (1 + 1e-9)) << "trial " << trial << " f " << f;
      for (int v = 0; v < n; ++v) {
        EXPECT_GE((*got)[v], fastest[v] * (1 - 1e-9)) << "trial " << trial;
        EXPECT_LE((*got)[v], slowest[v] * (1 + 1e-9)) << "trial " << trial;
      }
    }
  }
  EXPECT_GE(solved, 300);  // of 420: the deadline below the fastest plan is infeasible
}

// The solver's fast-end plans (after the min-cut steps and the fastest plan, see
// PipelineSolver::fast_end) each meet their deadline: from the fastest plan's time, evenly spaced
// up to the fastest step's, at most kFastEndDeadlines of them.
TEST(FastEndLp, SolverFastEndPlansMeetTheirDeadlines) {
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
  EXPECT_GE(checked, 150);  // 157 on this seed
}

}  // namespace
}  // namespace kareus::frontier
