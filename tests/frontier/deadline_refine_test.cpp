// SPDX-License-Identifier: Apache-2.0
#include "kareus/frontier/deadline_refine.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include "kareus/core/error.hpp"
#include "problems.hpp"

namespace kareus::frontier {
namespace {

using namespace test;

// From random plans within deadlines across the frontier: the refined plan is within the deadline
// and never costlier than its start whatever the node limit, and with room for the whole search it
// is the brute-force optimum. Random starts leave room, so the refinement must improve some (a
// refinement that returned its start would fail here).
TEST(DeadlineRefine, NeverCostlierWithinTheDeadlineAndTheOptimumWithEnoughNodes) {
  Rng rng(41);
  int improved = 0;
  for (int trial = 0; trial < 30; ++trial) {
    const auto p = random_deadline_problem(rng, trial);
    const auto all_plans = brute_force(p);
    const double fastest = all_plans.fastest().time.value();
    const double slowest = all_plans.min_energy().time.value();
    for (double f : {0.0, 0.3, 1.0}) {
      const double deadline = (fastest + f * (slowest - fastest)) * (1 + 1e-12);
      const auto start = random_plan_within(rng, p, deadline);
      const double start_energy = evaluate_independently(p, start).energy.value();
      const double want = least_energy_within(all_plans, deadline);
      for (int nodes : {0, 3, 1'000'000}) {
        const auto r = refine_within_deadline(p, start, Seconds(deadline), nodes);
        const auto cost = evaluate_independently(p, r.assignment);
        EXPECT_LE(cost.time.value(), deadline) << "trial " << trial << " nodes " << nodes;
        EXPECT_LE(cost.energy.value(), start_energy) << "trial " << trial << " nodes " << nodes;
        EXPECT_NEAR(r.cost.energy.value(), cost.energy.value(), 1e-9 * std::fabs(start_energy));
        EXPECT_EQ(r.improved, r.assignment != start);
        EXPECT_FALSE(r.time_capped);
        if (nodes == 1'000'000) {
          EXPECT_NEAR(cost.energy.value(), want, 1e-6 * std::fabs(want)) << "trial " << trial;
          improved += r.improved;
        }
      }
    }
  }
  EXPECT_GT(improved, 10);
}

// Front ends compare results exactly, so a node-limited refinement must give the same plan every
// run: on a case where 8 nodes stop CBC short of the optimum (4 x 8, an option set per
// instruction; the root improves the start, 12 nodes find the optimum), three runs agree.
TEST(DeadlineRefine, ANodeLimitedRefinementIsTheSameEveryRun) {
  Rng rng(43);
  const auto p = make_problem(4, 8, true, 3.0, [&] { return dvfs_like_options(rng, 6); });
  const std::vector<int> fastest(p.dag.nodes.size(), 0);
  const Seconds deadline = evaluate_plan(p, fastest).time * 1.1;
  const auto first = refine_within_deadline(p, fastest, deadline, 8);
  const auto full = refine_within_deadline(p, fastest, deadline, 1'000'000);
  EXPECT_TRUE(first.improved);
  EXPECT_GT(first.cost.energy, full.cost.energy);
  for (int run = 0; run < 2; ++run) {
    const auto again = refine_within_deadline(p, fastest, deadline, 8);
    EXPECT_EQ(again.assignment, first.assignment) << "run " << run;
    EXPECT_EQ(again.cost.energy.value(), first.cost.energy.value()) << "run " << run;
  }
}

void ignore_interrupt(int) {}

// CBC's driver installs its own SIGINT handler and leaves it there; DeadlineModel::optimum puts the
// application's back, so Ctrl-C (and Python's KeyboardInterrupt) works after a refinement.
TEST(DeadlineRefine, TheApplicationsSigintHandlerIsKept) {
  Rng rng(45);
  const auto p = make_problem(4, 8, true, 3.0, [&] { return dvfs_like_options(rng, 6); });
  const std::vector<int> fastest(p.dag.nodes.size(), 0);
  struct sigaction mine {};
  mine.sa_handler = ignore_interrupt;
  struct sigaction before {};
  ASSERT_EQ(sigaction(SIGINT, &mine, &before), 0);
  refine_within_deadline(p, fastest, evaluate_plan(p, fastest).time * 1.1, 10);
  struct sigaction after {};
  sigaction(SIGINT, &before, &after);
  EXPECT_EQ(after.sa_handler, ignore_interrupt);
}

TEST(DeadlineRefine, APlanPastTheDeadlineOrANegativeLimitIsRefused) {
  Rng rng(44);
  const auto p = random_deadline_problem(rng, 1);
  const std::vector<int> fastest(p.dag.nodes.size(), 0);
  const Seconds time = evaluate_plan(p, fastest).time;
  EXPECT_THROW(refine_within_deadline(p, fastest, time * 0.99, 10), Error);
  EXPECT_THROW(refine_within_deadline(p, fastest, time, -1), Error);
  EXPECT_THROW(refine_within_deadline(p, std::vector<int>(p.dag.nodes.size(), 99), time, 10),
               Error);
}

}  // namespace
}  // namespace kareus::frontier
