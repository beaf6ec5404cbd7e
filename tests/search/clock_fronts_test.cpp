#include "kareus/search/clock_fronts.hpp"

#include <cmath>
#include <set>

#include <gtest/gtest.h>

#include "kareus/search/search.hpp"
#include "synthetic_problem.hpp"

namespace kareus::search {
namespace {

TEST(ClockFronts, LayoutSplitsClockFromShape) {
  const testing::SyntheticProblem problem({4, 4, 2.0e-3, 48e6, 0.0, 1});
  const ClockLayout layout = clock_layout(problem);
  ASSERT_EQ(layout.clocks(), 18u);  // A100 900..1410 MHz step 30
  const std::size_t shapes = layout.id_at.front().size();
  EXPECT_EQ(shapes * layout.clocks(), problem.size());
  for (std::size_t id = 0; id < problem.size(); ++id) {
    EXPECT_EQ(layout.id_at[layout.clock_of[id]][layout.shape_of[id]], id);
    const auto features = problem.raw_features(id);
    const auto lowest = problem.raw_features(layout.id_at[0][layout.shape_of[id]]);
    // Same shape at the lowest clock: every feature but the clock agrees.
    EXPECT_TRUE(std::equal(features.begin() + 1, features.end(), lowest.begin() + 1));
  }
  EXPECT_LT(problem.raw_features(layout.id_at[0][0]).at(0),
            problem.raw_features(layout.id_at[1][0]).at(0));
}

TEST(ClockFronts, MovementIsHowFarTheCompetitionFallsShort) {
  ClockFronts fronts(2, 0.03);
  EXPECT_TRUE(std::isinf(fronts.add(0, {1.0, 10.0})));  // nothing competes yet
  EXPECT_EQ(fronts.add(0, {1.1, 10.5}), 0.0);           // dominated at its own clock
  EXPECT_NEAR(fronts.add(0, {0.98, 10.0}), 1.0 / 0.98 - 1, 1e-12);
  // Another clock competes scaled by 1.03: a point within 3 % of it moves nothing ...
  EXPECT_EQ(fronts.add(1, {1.02, 10.4}), 0.0);
  EXPECT_EQ(fronts.covered(), 2u);
  // ... one that beats the scaled competition moves it by the factor it is short.
  EXPECT_NEAR(fronts.add(1, {0.9, 10.0}), 0.98 * 1.03 / 0.9 - 1, 1e-12);
  // Each clock keeps its own Pareto set.
  EXPECT_EQ(fronts.front(0).size(), 1u);
  EXPECT_EQ(fronts.front(1).size(), 1u);
}

TEST(ClockFronts, KareusCoversEveryClockAndStopsWhenTheFrontsAreStill) {
  testing::SyntheticProblem problem({4, 4, 2.0e-3, 48e6, 0.0, 3});
  SearchOptions o;
  o.strategy = Strategy::kKareus;
  o.seed = 4;
  const SearchResult r = run_search(problem, o);
  const ClockLayout layout = clock_layout(problem);
  std::set<std::size_t> clocks;
  for (const auto& m : r.measured) clocks.insert(layout.clock_of[m.id]);
  EXPECT_EQ(clocks.size(), layout.clocks());
  // The stopping rule fired before the cap (every shape once plus 3 per clock, at most half
  // of paper's 224), so the budget went unspent because the fronts stopped moving.
  const std::size_t cap =
      std::min<std::size_t>(112, layout.id_at.front().size() + 3 * layout.clocks());
  EXPECT_EQ(r.summary.stop_reason, StopReason::kConverged);
  EXPECT_LT(r.measured.size(), cap);
  // The last batches moved no clock's front by more than 0.1 %: replaying the measurements
  // through ClockFronts, the last three batches of 4 move it less than that.
  ClockFronts fronts(layout.clocks(), 0.03);
  std::vector<double> moved;
  for (const auto& m : r.measured) {
    moved.push_back(fronts.add(layout.clock_of[m.id],
                               {m.measurement.time.value(), m.measurement.dynamic_energy.value()}));
  }
  ASSERT_GE(moved.size(), 12u);
  for (std::size_t i = moved.size() - 12; i < moved.size(); ++i) EXPECT_LT(moved[i], 1e-3);
}

}  // namespace
}  // namespace kareus::search
