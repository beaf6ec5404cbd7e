// SPDX-License-Identifier: Apache-2.0
#include "kareus/frontier/switching_hull.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "kareus/core/rng.hpp"

namespace kareus::frontier {
namespace {

// Against brute force over every clock sequence of small random instances: the hull's plans are
// costed correctly and no sequence beats the hull at any lambda.
TEST(SwitchingHull, MatchesBruteForceOnSmallInstances) {
  Rng rng(7);
  for (int instance = 0; instance < 20; ++instance) {
    const std::size_t clocks = 3, n = 6;
    std::vector<Step> steps(n);
    for (auto& s : steps)
      for (std::size_t c = 0; c < clocks; ++c)
        if (c == 0 || rng.uniform() < 0.8)  // some steps cannot run at every clock
          s.options.push_back({c, Seconds(rng.uniform(1e-3, 5e-3)), Joules(rng.uniform(0.1, 2))});
    const auto switching = uniform_switch_cost(clocks, milliseconds(rng.uniform(0, 2)), Watts(40));
    const auto hull = switching_hull(steps, clocks, switching);
    for (const auto& h : hull) {
      const auto cost = evaluate_choice(steps, h.choice, switching);
      EXPECT_EQ(cost.time, h.cost.time);
      EXPECT_EQ(cost.energy, h.cost.energy);
    }
    std::vector<SequenceCost> all;
    std::vector<std::size_t> choice(n, 0);
    while (true) {
      all.push_back(evaluate_choice(steps, choice, switching));
      std::size_t i = 0;
      while (i < n && ++choice[i] == steps[i].options.size()) choice[i++] = 0;
      if (i == n) break;
    }
    for (double lambda = 0; lambda < 3000; lambda += 7.3) {
      double brute = std::numeric_limits<double>::infinity(), best = brute;
      for (const auto& c : all) brute = std::min(brute, c.energy.value() + lambda * c.time.value());
      for (const auto& h : hull)
        best = std::min(best, h.cost.energy.value() + lambda * h.cost.time.value());
      EXPECT_NEAR(best, brute, 1e-9 * brute) << "instance " << instance << " lambda " << lambda;
    }
  }
}

}  // namespace
}  // namespace kareus::frontier
