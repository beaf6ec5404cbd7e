// SPDX-License-Identifier: Apache-2.0
#include "kareus/frontier/deadline_model.hpp"

#include <gtest/gtest.h>

#include <signal.h>

#include <atomic>
#include <thread>

#include "kareus/core/error.hpp"
#include "problems.hpp"

namespace kareus::frontier {
namespace {

using namespace test;

// The MILP is the reference optimum of the benchmarks: check it against enumerating every plan,
// at the fastest time (where slack is scarcest) and at deadlines across the frontier, on DAGs
// whose microbatches differ (per-instruction options), so that many paths are near-critical.
TEST(DeadlineModel, MilpOptimumIsTheBruteForceLeastEnergyWithinTheDeadline) {
  Rng rng(31);
  for (int trial = 0; trial < 40; ++trial) {
    const auto p = random_deadline_problem(rng, trial);
    const auto all_plans = brute_force(p);
    DeadlineModel model(p, false);
    const double fastest = all_plans.fastest().time.value();
    const double slowest = all_plans.min_energy().time.value();
    for (double f : {0.0, 0.1, 0.4, 1.0}) {
      const double deadline = fastest + f * (slowest - fastest);
      model.set_deadline(Seconds(deadline * (1 + 1e-12)));
      const auto optimum = model.optimum(60.0);
      ASSERT_TRUE(optimum.has_value()) << "trial " << trial << " deadline " << deadline;
      EXPECT_TRUE(optimum->proven);
      const auto cost = evaluate_independently(p, optimum->assignment);
      const double want = least_energy_within(all_plans, deadline * (1 + 1e-12));
      EXPECT_LE(cost.time.value(), deadline * (1 + 1e-9)) << "trial " << trial;
      EXPECT_NEAR(cost.energy.value(), want, 1e-6 * std::fabs(want)) << "trial " << trial;
      EXPECT_NEAR(optimum->lower_bound.value(), want, 1e-6 * std::fabs(want)) << "trial " << trial;
    }
    model.set_deadline(Seconds(fastest * 0.99));
    EXPECT_FALSE(model.optimum(60.0).has_value());
    EXPECT_FALSE(model.relaxed_durations().has_value());
  }
}

// A MIP start (what the benchmark gives CBC: the solver's plan) is CBC's incumbent: whatever the
// time limit, the plan returned is no worse than the start and the bound no higher; with time, the
// optimum is still found; with none, a start that is already optimal comes back as it is. Random
// starts within the deadline include options that have no column (another option beats them).
TEST(DeadlineModel, AMipStartIsNeverBeatenByTheReturnedPlanOrBound) {
  Rng rng(33);
  for (int trial = 0; trial < 30; ++trial) {
    const auto p = random_deadline_problem(rng, trial);
    const auto all_plans = brute_force(p);
    DeadlineModel model(p, false);
    const double fastest = all_plans.fastest().time.value();
    const double slowest = all_plans.min_energy().time.value();
    for (double f : {0.0, 0.3, 1.0}) {
      const double deadline = (fastest + f * (slowest - fastest)) * (1 + 1e-12);
      model.set_deadline(Seconds(deadline));
      const auto start = random_plan_within(rng, p, deadline);
      const double start_energy = evaluate_independently(p, start).energy.value();
      const double want = least_energy_within(all_plans, deadline);
      for (double seconds : {0.0, 60.0}) {
        const auto optimum = model.optimum(seconds, start);
        ASSERT_TRUE(optimum.has_value()) << "trial " << trial;
        const auto cost = evaluate_independently(p, optimum->assignment);
        EXPECT_LE(cost.time.value(), deadline * (1 + 1e-9)) << "trial " << trial;
        EXPECT_LE(cost.energy.value(), start_energy * (1 + 1e-9)) << "trial " << trial;
        EXPECT_LE(optimum->lower_bound.value(), start_energy * (1 + 1e-9)) << "trial " << trial;
        EXPECT_LE(optimum->lower_bound.value(), want * (1 + 1e-6)) << "trial " << trial;
        if (seconds > 0) {
          EXPECT_TRUE(optimum->proven) << "trial " << trial;
          EXPECT_NEAR(cost.energy.value(), want, 1e-6 * std::fabs(want)) << "trial " << trial;
          // The optimum as the start, and no time: it comes back.
          const auto again = model.optimum(0.0, optimum->assignment);
          ASSERT_TRUE(again.has_value()) << "trial " << trial;
          EXPECT_NEAR(evaluate_independently(p, again->assignment).energy.value(), want,
                      1e-6 * std::fabs(want))
              << "trial " << trial;
        }
      }
    }
  }
}

// A start that misses the deadline, or names options the problem does not have, is refused.
TEST(DeadlineModel, AMipStartOutsideTheProblemIsRefused) {
  Rng rng(34);
  const auto p = make_problem(2, 2, true, 2.0, [&] { return dvfs_like_options(rng, 4); });
  DeadlineModel model(p, false);
  std::vector<int> slowest;
  for (std::size_t v = 0; v < p.dag.nodes.size(); ++v)
    slowest.push_back(static_cast<int>(p.option_sets[p.option_set_of[v]].size()) - 1);
  const std::vector<int> fastest(p.dag.nodes.size(), 0);
  model.set_deadline(evaluate_independently(p, fastest).time * (1 + 1e-12));
  EXPECT_THROW(model.optimum(1.0, slowest), kareus::Error);
  EXPECT_THROW(model.optimum(1.0, std::vector<int>(fastest.size() - 1, 0)), kareus::Error);
  auto bad = fastest;
  bad[1] = 99;
  EXPECT_THROW(model.optimum(1.0, bad), kareus::Error);
  EXPECT_TRUE(model.optimum(1.0, fastest).has_value());
}

// The LP relaxation convexifies each instruction's options: its durations lie between the fastest
// and the slowest option and meet the deadline along every path.
void sentinel_handler(int) {}

// CLP's initial solve, left to itself, swaps in a SIGINT handler of its own for the solve, which
// LPs solved side by side turn into a lost Ctrl-C (deadline_model.cpp). A second thread watches
// the disposition through a solve long enough to be seen; it must never change.
TEST(DeadlineModel, TheLpLeavesTheSigintHandlerAlone) {
  Rng rng(41);
  const auto p = make_problem(8, 48, true, 60.0, [&] { return dvfs_like_options(rng, 12); });
  struct sigaction sentinel = {}, previous = {};
  sentinel.sa_handler = sentinel_handler;
  sigemptyset(&sentinel.sa_mask);
  ASSERT_EQ(sigaction(SIGINT, &sentinel, &previous), 0);
  std::atomic<bool> solving = true;
  std::atomic<int> changes = 0, looks = 0;
  std::thread watcher([&] {
    while (solving) {
      struct sigaction now = {};
      sigaction(SIGINT, nullptr, &now);
      if (now.sa_handler != sentinel_handler) ++changes;
      ++looks;
    }
  });
  for (int solve = 0; solve < 3; ++solve) {
    DeadlineModel model(p, true);
    model.set_deadline(Seconds(1e6));
    EXPECT_TRUE(model.relaxed_durations().has_value());
  }
  solving = false;
  watcher.join();
  sigaction(SIGINT, &previous, nullptr);
  EXPECT_GT(looks.load(), 0);
  EXPECT_EQ(changes.load(), 0);
}

TEST(DeadlineModel, RelaxedDurationsMeetTheDeadlineOnEveryPath) {
  Rng rng(32);
  for (int trial = 0; trial < 20; ++trial) {
    const auto p = make_problem(3, 4, true, 3.0, [&] { return dvfs_like_options(rng, 8); });
    const auto all_fastest = std::vector<int>(p.dag.nodes.size(), 0);  // dvfs-like: fastest first
    const double deadline = evaluate_plan(p, all_fastest).time.value() * 1.05;
    DeadlineModel model(p, true);
    model.set_deadline(Seconds(deadline));
    const auto durations = model.relaxed_durations();
    ASSERT_TRUE(durations.has_value());
    std::vector<double> finish(p.dag.nodes.size(), 0.0);
    for (int v : p.dag.topological_order()) {
      for (const auto& [from, to] : p.dag.edges)
        if (to == v) finish[v] = std::max(finish[v], finish[from]);
      finish[v] += (*durations)[v];
      EXPECT_LE(finish[v], deadline * (1 + 1e-7));
      const auto& set = p.option_sets[p.option_set_of[v]];
      EXPECT_GE((*durations)[v], set.front().time.value() * (1 - 1e-7));
      EXPECT_LE((*durations)[v], set.back().time.value() * (1 + 1e-7));
    }
  }
}

}  // namespace
}  // namespace kareus::frontier
