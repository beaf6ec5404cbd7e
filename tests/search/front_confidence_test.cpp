// SPDX-License-Identifier: Apache-2.0
// Noise estimates, open front decisions and the confidence figure, on closed forms; and the
// `kareus` strategy's repeats on a problem whose repeats are independent samples.
#include "kareus/search/front_confidence.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "kareus/core/rng.hpp"
#include "kareus/search/search.hpp"
#include "synthetic_problem.hpp"

namespace kareus::search {
namespace {

TEST(FrontConfidence, PooledSigmaIsTheRelativeSpreadOfRepeats) {
  // (1, 2) and (3, 2): deviations +-0.5 in x, 0 in y; one degree of freedom. A point read once
  // adds nothing.
  const Point2 s = pooled_relative_sigma({{{1, 2}, {3, 2}}, {{5, 5}}});
  EXPECT_NEAR(s.x, std::sqrt(0.5), 1e-12);
  EXPECT_EQ(s.y, 0.0);
  // Two configurations pool their squared deviations over their degrees of freedom: 0.5 + 0.08
  // (deviations +-0.2 of 2 and 3) over 1 + 1.
  EXPECT_NEAR(pooled_relative_sigma({{{1, 1}, {3, 1}}, {{4, 1}, {6, 1}}}).x, std::sqrt(0.58 / 2),
              1e-12);
  EXPECT_EQ(pooled_relative_sigma({{{1, 1}}}).x, 0.0);
}

TEST(FrontConfidence, MarginCountsStandardErrorsOfTheMeans) {
  const SampledPoint p{{1.0, 1.0}, 1};
  const SampledPoint q{{1.02, 0.98}, 1};
  // x: +2 % over a standard error of 1 % x sqrt(2); y: -2 %; the larger decides.
  EXPECT_NEAR(dominance_margin(q, p, {0.01, 0.01}), 0.02 / (0.01 * std::sqrt(2.0)), 1e-9);
  // Four readings each halve the standard error's sqrt(1/n + 1/n) factor.
  EXPECT_NEAR(dominance_margin({q.mean, 4}, {p.mean, 4}, {0.01, 0.01}),
              0.02 / (0.01 * std::sqrt(0.5)), 1e-9);
  // A point dominating by 5 % in both with 1 % noise: clearly negative.
  EXPECT_LT(dominance_margin({{0.95, 0.95}, 1}, p, {0.01, 0.01}), -kDecidedMargin);
  // Without noise the sign decides.
  EXPECT_EQ(dominance_margin(q, p, {}), std::numeric_limits<double>::infinity());
  EXPECT_EQ(dominance_margin({{0.99, 0.99}, 1}, p, {}), -std::numeric_limits<double>::infinity());
}

// One clock: a front of a fast point and a slow one far apart, plus a point 1 % slower and 1 %
// cheaper than the fast one (on the front, but within noise of being dominated by it).
std::vector<SampledPoint> one_clock(std::size_t samples) {
  return {{{1.00, 2.00}, samples}, {{1.50, 1.00}, samples}, {{1.01, 1.98}, samples}};
}

TEST(FrontConfidence, OnlyThePointsOfAnOpenDecisionAreRepeated) {
  const Point2 sigma{0.01, 0.01};
  const auto open = open_decisions(one_clock(1), sigma);
  ASSERT_EQ(open.size(), 2u);  // (0 vs 2) seen from both front points
  for (const OpenDecision& d : open) {
    EXPECT_TRUE((d.front == 0 && d.other == 2) || (d.front == 2 && d.other == 0));
    EXPECT_LT(d.margin, kDecidedMargin);
  }
  // Both front points of the open decision, equally read, are repeated; the slow point is
  // decided and never is.
  const auto picks = points_to_repeat({one_clock(1)}, sigma, 3, 10);
  ASSERT_EQ(picks.size(), 2u);
  for (const SetIndex& p : picks) {
    EXPECT_EQ(p.set, 0u);
    EXPECT_NE(p.index, 1u);
  }
  EXPECT_NE(picks[0].index, picks[1].index);
  // The point read fewer times is the one repeated.
  auto uneven = one_clock(2);
  uneven[2].samples = 1;
  const auto fewer = points_to_repeat({uneven}, sigma, 3, 10);
  ASSERT_EQ(fewer.size(), 1u);
  EXPECT_EQ(fewer[0].index, 2u);
  // Nothing read max_samples times, nothing at all without noise, at most `count`.
  EXPECT_TRUE(points_to_repeat({one_clock(3)}, sigma, 3, 10).empty());
  EXPECT_TRUE(points_to_repeat({one_clock(1)}, {}, 3, 10).empty());
  EXPECT_TRUE(points_to_repeat({one_clock(1), one_clock(1)}, sigma, 3, 0).empty());
  EXPECT_EQ(points_to_repeat({one_clock(1), one_clock(1)}, sigma, 3, 10).size(), 4u);
  EXPECT_EQ(points_to_repeat({one_clock(1), one_clock(1)}, sigma, 3, 3).size(), 3u);
}

TEST(FrontConfidence, ShareOfFrontPointsDecidedBeyondTwoStandardErrors) {
  // All three points are on the front; 0 and 2 are within noise of each other, 1 is decided.
  EXPECT_NEAR(front_confidence({one_clock(1)}, {0.01, 0.01}), 1.0 / 3.0, 1e-12);
  // With 100 readings each the 1 % gap is 1 % / (1 % x sqrt(0.02)) = 7 standard errors.
  EXPECT_EQ(front_confidence({one_clock(100)}, {0.01, 0.01}), 1.0);
  // Less noise decides more; without noise everything is decided.
  EXPECT_EQ(front_confidence({one_clock(1)}, {0.001, 0.001}), 1.0);
  EXPECT_EQ(front_confidence({one_clock(1)}, {}), 1.0);
  // Sets pool their front points: 1 of 3 and 3 of 3.
  EXPECT_NEAR(front_confidence({one_clock(1), one_clock(100)}, {0.01, 0.01}), 4.0 / 6.0, 1e-12);
  EXPECT_EQ(front_confidence({}, {0.01, 0.01}), 1.0);
}

// The synthetic partition without its fixed noise, read through independent Gaussian noise per
// (config, repeat), as a real GPU's repeated runs.
class RepeatableProblem : public Problem {
 public:
  explicit RepeatableProblem(double sigma, std::size_t compute_ops = 4)
      : inner_({4, compute_ops, 2.0e-3, 48e6, 0.0, 1}), sigma_(sigma) {}
  std::size_t size() const override { return inner_.size(); }
  std::string key(std::size_t id) const override { return inner_.key(id); }
  std::vector<double> raw_features(std::size_t id) const override {
    return inner_.raw_features(id);
  }
  Watts static_power() const override { return inner_.static_power(); }
  std::size_t compute_ops() const override { return inner_.compute_ops(); }
  std::vector<Measurement> measure(const std::vector<std::size_t>& ids) override {
    return measure_repeat(ids, 0);
  }
  std::vector<Measurement> measure_repeat(const std::vector<std::size_t>& ids,
                                          std::size_t repeat) override {
    std::vector<Measurement> out;
    for (std::size_t id : ids) {
      Measurement m = inner_.truth(id);
      Rng rng(id * 7919 + repeat);
      m.time = m.time * rng.normal(1.0, sigma_);
      m.dynamic_energy = m.dynamic_energy * rng.normal(1.0, sigma_);
      m.total_energy = m.dynamic_energy + static_power() * m.time;
      out.push_back(m);
      readings_ += 1;
    }
    return out;
  }
  std::size_t readings() const { return readings_; }

 private:
  testing::SyntheticProblem inner_;
  double sigma_;
  std::size_t readings_ = 0;
};

TEST(KareusRepeats, OnlyUnderNoiseAndChargedToTheCap) {
  SearchOptions options;
  options.strategy = Strategy::kKareus;
  options.seed = 3;
  RepeatableProblem exact(0.0);
  const SearchResult quiet = run_search(exact, options);
  // The probe reads the two fastest points again; they agree, so nothing else is repeated.
  EXPECT_EQ(quiet.summary.repeats, 2u);
  EXPECT_EQ(quiet.summary.noise_time, 0.0);
  EXPECT_EQ(quiet.summary.confidence, 1.0);

  RepeatableProblem noisy(0.03);
  const SearchResult r = run_search(noisy, options);
  EXPECT_GT(r.summary.repeats, 2u);
  // Repeats count as measurements: readings = configurations + repeats, within the same cap.
  EXPECT_EQ(noisy.readings(), r.measured.size() + r.summary.repeats);
  EXPECT_EQ(r.summary.measurements(), noisy.readings());
  // Four compute ops: large, capped at half of paper's 224; repeats at most a fifth of that.
  EXPECT_LE(r.summary.measurements(), 112u);
  EXPECT_LE(r.summary.repeats, 112u / 5);
  // The estimate recovers the 3 % noise within its sampling error.
  EXPECT_NEAR(r.summary.noise_time, 0.03, 0.012);
  EXPECT_NEAR(r.summary.noise_energy, 0.03, 0.012);
  ASSERT_TRUE(r.summary.confidence.has_value());
  EXPECT_GE(*r.summary.confidence, 0.0);
  EXPECT_LT(*r.summary.confidence, 1.0);
  std::size_t repeated = 0;
  for (const MeasuredPoint& p : r.measured) {
    EXPECT_LE(p.samples, 3u);
    repeated += p.samples - 1;
  }
  EXPECT_EQ(repeated, r.summary.repeats);
}

// On a cap-bound space (40 shapes x 18 clocks, cap 56) the share of the cap kept for model-guided
// picks goes back to the clock coverage under noise, whose shapes read at every clock are what the
// planner pools noisy readings across.
TEST(KareusRepeats, ModelShareGoesToTheCoverageUnderNoise) {
  SearchOptions options;
  options.strategy = Strategy::kKareus;
  const auto model_picks = [](const SearchResult& r) {
    return static_cast<std::size_t>(
        std::count_if(r.measured.begin(), r.measured.end(), [](const MeasuredPoint& p) {
          return p.selected_by != "initial" && p.selected_by != "clock_coverage";
        }));
  };
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    options.seed = seed;
    RepeatableProblem exact(0.0, 2);
    EXPECT_GE(model_picks(run_search(exact, options)), 6u) << "seed " << seed;
    RepeatableProblem noisy(0.03, 2);
    EXPECT_EQ(model_picks(run_search(noisy, options)), 0u) << "seed " << seed;
  }
}

}  // namespace
}  // namespace kareus::search
