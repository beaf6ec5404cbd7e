// SPDX-License-Identifier: Apache-2.0
#include "option_hull.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "kareus/core/rng.hpp"

namespace kareus::frontier {
namespace {

// The search that starts from a given option must answer exactly what the plain search and the
// rule "never faster than that option" answer together, for kept options and dropped ones, and
// for windows at, between, below and above the options' times (many options, so that the answer
// is often more than a few options up).
TEST(OptionHull, SlowestWithinFromAnOptionIsThePlainSearchNeverFaster) {
  Rng rng(23);
  int far = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<ExecutionOption> options(static_cast<std::size_t>(rng.integer(1, 40)));
    for (auto& o : options) {
      o.time = Seconds(0.01 * static_cast<double>(rng.integer(1, 30)));  // ties on purpose
      o.energy = Joules(rng.uniform(1.0, 10.0));
    }
    const OptionHull hull(options, Watts(rng.uniform(0.0, 5.0)), Seconds(0.01));
    for (int query = 0; query < 50; ++query) {
      const int at_least = static_cast<int>(rng.integer(0, options.size() - 1));
      const Seconds window = rng.uniform() < 0.3 ? options[rng.integer(0, options.size() - 1)].time
                                                 : Seconds(rng.uniform(0.0, 0.35));
      const int plain = hull.slowest_within(window);
      const int expected =
          plain < 0 || options[plain].time < options[at_least].time ? at_least : plain;
      ASSERT_EQ(hull.slowest_within(window, at_least), expected)
          << "trial " << trial << " window " << window.value() << " at least " << at_least;
      far +=
          expected != at_least && options[expected].time > options[at_least].time + Seconds(0.05);
    }
  }
  EXPECT_GT(far, 100);  // answers well above the starting option happened
}

}  // namespace
}  // namespace kareus::frontier
