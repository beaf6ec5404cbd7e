// SPDX-License-Identifier: Apache-2.0
#include "kareus/search/clock_fronts.hpp"

#include <algorithm>
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

// Six clocks x 12 shapes with separable closed forms: a shape's time scales with 1 / clock and
// its dynamic energy with clock^2, and shape 0 beats every other shape at every clock. Once shape
// 0 is measured at every clock nothing the search measures can move a front, so the stopping
// rule must end the search before the cap.
class SeparableProblem : public Problem {
 public:
  std::size_t size() const override { return 6 * kShapes; }
  std::string key(std::size_t id) const override { return std::to_string(id); }
  std::vector<double> raw_features(std::size_t id) const override {
    return {clock(id), static_cast<double>(id % kShapes)};
  }
  Watts static_power() const override { return Watts(50.0); }
  std::size_t compute_ops() const override { return 4; }
  std::vector<Measurement> measure(const std::vector<std::size_t>& ids) override {
    std::vector<Measurement> out;
    for (std::size_t id : ids) {
      const double penalty = 1.0 + 0.1 * static_cast<double>(id % kShapes);
      const double f = clock(id) / 1410.0;
      const double t = penalty / f;
      const double e = penalty * f * f;
      out.push_back({Seconds(t), Joules(e + 50.0 * t), Joules(e), Seconds(1.0), false});
    }
    return out;
  }

 private:
  static constexpr std::size_t kShapes = 12;
  static double clock(std::size_t id) { return 1410.0 - 30.0 * static_cast<double>(id / kShapes); }
};

TEST(ClockFronts, KareusCoversEveryClockAndStopsWhenTheFrontsAreStill) {
  SeparableProblem problem;
  SearchOptions o;
  o.strategy = Strategy::kKareus;
  o.seed = 4;
  const SearchResult r = run_search(problem, o);
  const ClockLayout layout = clock_layout(problem);
  ASSERT_EQ(layout.clocks(), 6u);
  std::set<std::size_t> clocks;
  for (const auto& m : r.measured) clocks.insert(layout.clock_of[m.id]);
  EXPECT_EQ(clocks.size(), layout.clocks());
  // The cap is every shape once plus 4 per clock (36, under half of paper's 224); the stopping
  // rule fired before it because the fronts stopped moving.
  EXPECT_EQ(r.summary.stop_reason, StopReason::kConverged);
  EXPECT_LT(r.measured.size(), 36u);
  // Replaying the measurements through ClockFronts, the run ends with every clock's true front
  // (shape 0) measured and no measurement after the last one that moved a front by 0.1 % or
  // more, other than at most kStillBatches = 3 batches of 4.
  ClockFronts fronts(layout.clocks(), 0.03);
  std::size_t last_move = 0;
  for (std::size_t i = 0; i < r.measured.size(); ++i) {
    const auto& m = r.measured[i];
    if (fronts.add(layout.clock_of[m.id],
                   {m.measurement.time.value(), m.measurement.dynamic_energy.value()}) >= 1e-3) {
      last_move = i;
    }
  }
  EXPECT_LE(r.measured.size() - 1 - last_move, 12u);
  for (std::size_t c = 0; c < layout.clocks(); ++c) {
    ASSERT_EQ(fronts.front(c).size(), 1u);
    EXPECT_TRUE(std::any_of(r.measured.begin(), r.measured.end(),
                            [&](const MeasuredPoint& m) { return m.id == layout.id_at[c][0]; }));
  }
}

}  // namespace
}  // namespace kareus::search
