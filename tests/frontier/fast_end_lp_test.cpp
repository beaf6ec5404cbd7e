// SPDX-License-Identifier: Apache-2.0
// The fast end's LP (hull segments, start and finish columns) against DeadlineModel's
// multiple-choice LP relaxation of the same problem: the same optimum at every deadline, durations
// that meet it, and the solver's fast-end plans within their deadlines.
#include "fast_end_lp.hpp"

#include <gtest/gtest.h>

#include <ClpDualRowSteepest.hpp>
#include <ClpSolve.hpp>
#include <CoinPackedVector.hpp>

#include "kareus/frontier/deadline_model.hpp"
#include "problems.hpp"

#include <functional>
#include <iostream>

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

// Per node, its fastest and slowest option's time.
std::pair<std::vector<double>, std::vector<double>> time_range(const PipelineProblem& p) {
  const std::size_t n = p.dag.nodes.size();
  std::vector<double> fastest(n), slowest(n);
  for (std::size_t v = 0; v < n; ++v) {
    const auto& set = p.option_sets[p.option_set_of[v]];
    fastest[v] = slowest[v] = set.front().time.value();
    for (const auto& o : set) {
      fastest[v] = std::min(fastest[v], o.time.value());
      slowest[v] = std::max(slowest[v], o.time.value());
    }
  }
  return {fastest, slowest};
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
    const auto [fastest, slowest] = time_range(p);
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

// The feasible deadlines of the first test, in its order: from the fastest plan's makespan to past
// the slowest plan's.
std::vector<double> deadlines_of(const PipelineProblem& p) {
  const auto [fastest, slowest] = time_range(p);
  const double low = makespan(p, fastest), high = makespan(p, slowest);
  std::vector<double> deadlines;
  for (double f : {0.0, 0.3, 0.05, 1.2, 0.6, 0.01}) deadlines.push_back(low + f * (high - low));
  return deadlines;
}

// The durations come from the earliest optimal times: no start or finish can be made earlier
// without raising the objective. Brute force: per time column, an LP that minimises it over the
// optimal face (the objective bounded by its optimum).
TEST(FastEndLp, DurationsAreThoseOfTheEarliestOptimalTimes) {
  Rng rng(53);
  int checked = 0;
  for (int trial = 0; trial < 24; ++trial) {
    const auto p = random_problem(rng, trial);
    const int n = static_cast<int>(p.dag.nodes.size());
    FastEndLp lp(p);
    for (double deadline : deadlines_of(p)) {
      lp.set_deadline(Seconds(deadline));
      const auto got = lp.relaxed_durations();
      if (!got) continue;
      OsiClpSolverInterface face(lp.solver());
      const int columns = face.getNumCols(), first_time = columns - 2 * n - 1;
      const double optimum = face.getObjValue();
      CoinPackedVector cost;
      for (int c = 0; c < columns; ++c)
        if (face.getObjCoefficients()[c] != 0) cost.insert(c, face.getObjCoefficients()[c]);
      face.addRow(cost, -face.getInfinity(), optimum + 1e-10 * std::max(1.0, std::fabs(optimum)));
      std::vector<double> earliest(2 * n);
      for (int k = 0; k < 2 * n; ++k) {
        for (int c = 0; c < columns; ++c) face.setObjCoeff(c, c == first_time + k ? 1.0 : 0.0);
        face.initialSolve();
        ASSERT_TRUE(face.isProvenOptimal()) << "trial " << trial;
        earliest[k] = face.getObjValue();
      }
      for (int v = 0; v < n; ++v)
        EXPECT_NEAR((*got)[v], earliest[n + v] - earliest[v], 1e-7 * deadline)
            << "trial " << trial << " deadline " << deadline << " node " << v;
      ++checked;
    }
  }
  EXPECT_GE(checked, 100);
}

// Per node, the slowest option within its duration, as the fast end rounds it.
std::vector<int> rounded(const PipelineProblem& p, const std::vector<double>& durations) {
  std::vector<int> options;
  for (std::size_t v = 0; v < durations.size(); ++v) {
    const auto& set = p.option_sets[p.option_set_of[v]];
    int best = -1;
    for (int i = 0; i < static_cast<int>(set.size()); ++i)
      if (set[i].time.value() <= durations[v] * (1 + 1e-9) &&
          (best < 0 || set[i].time > set[best].time))
        best = i;
    options.push_back(best);
  }
  return options;
}

// Which optimal vertex CLP returns depends on its settings; the durations do not, up to the last
// bits (another vertex's duals can keep other rows tight, the same face in exact arithmetic, and
// its longest paths are other sums of the data), and the plans rounded from them not at all.
// Without the earliest-times step the plans differ (the test would not tell otherwise).
TEST(FastEndLp, DurationsDoNotDependOnClpSettings) {
  Rng rng(54);
  const std::vector<std::function<void(OsiClpSolverInterface&)>> settings = {
      [](OsiClpSolverInterface&) {},  // the interior point method, then Dantzig's rule
      [](OsiClpSolverInterface& s) {  // dual simplex from the slack basis, then steepest edge
        ClpSolve dual;
        dual.setSolveType(ClpSolve::useDual);
        dual.setSpecialOption(2, 1);
        s.setSolveOptions(dual);
        ClpDualRowSteepest steepest;
        s.getModelPtr()->setDualRowPivotAlgorithm(steepest);
      },
      [](OsiClpSolverInterface& s) { s.setHintParam(OsiDoDualInInitial, false, OsiHintDo); },
      [](OsiClpSolverInterface& s) { s.setHintParam(OsiDoPresolveInInitial, false, OsiHintDo); },
      [](OsiClpSolverInterface& s) { s.getModelPtr()->setPerturbation(50); },
      [](OsiClpSolverInterface& s) { s.setHintParam(OsiDoDualInResolve, false, OsiHintDo); },
  };
  int solves = 0, differ_without = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const auto p = random_problem(rng, trial);
    for (bool earliest : {true, false}) {
      std::vector<std::vector<std::optional<std::vector<double>>>> runs;
      for (const auto& set : settings) {
        FastEndLp lp(p);
        lp.set_earliest_times(earliest);
        set(lp.solver());
        auto& run = runs.emplace_back();
        for (double deadline : deadlines_of(p)) {
          lp.set_deadline(Seconds(deadline));
          run.push_back(lp.relaxed_durations());
        }
      }
      for (std::size_t k = 1; k < runs.size(); ++k)
        for (std::size_t d = 0; d < runs[0].size(); ++d) {
          const auto& got = runs[k][d];
          const auto& want = runs[0][d];
          ASSERT_EQ(got.has_value(), want.has_value()) << "trial " << trial;
          if (!got) continue;
          const bool same_plan = rounded(p, *got) == rounded(p, *want);
          if (earliest) {
            EXPECT_TRUE(same_plan) << "trial " << trial << " setting " << k;
            for (std::size_t v = 0; v < got->size(); ++v)
              EXPECT_NEAR((*got)[v], (*want)[v], 1e-13 * (*want)[v]) << "trial " << trial;
            ++solves;
          } else {
            differ_without += !same_plan;
          }
        }
    }
  }
  EXPECT_GE(solves, 800);
  EXPECT_GT(differ_without, 0);
  std::cout << differ_without << " of " << solves << " rounded plans differ without the step\n";
}

// The solver's fast-end plans (after the min-cut steps and the fastest plan, see
// PipelineSolver::fast_end) each meet their deadline: from the fastest plan's time, evenly spaced
// up to the fastest step's, at most kFastEndDeadlines of them.
TEST(FastEndLp, SolverFastEndPlansMeetTheirDeadlines) {
  Rng rng(52);
  int checked = 0;
  for (int trial = 0; trial < 30; ++trial) {
    // One draw per statement: the order in which a call's arguments are evaluated is the
    // compiler's (gcc and clang differ), and the problems must not depend on it.
    const auto stages = static_cast<int>(rng.integer(2, 4));
    const auto microbatches = static_cast<int>(rng.integer(3, 8));
    const double p_blocking = rng.uniform(0.0, 5.0);
    const auto p = make_problem(stages, microbatches, true, p_blocking,
                                [&] { return dvfs_like_options(rng, 12); });
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
  EXPECT_GE(checked, 140);  // 145 on this seed, with gcc and clang alike
}

}  // namespace
}  // namespace kareus::frontier
