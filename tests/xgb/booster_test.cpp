// SPDX-License-Identifier: Apache-2.0
// The XGBoost wrapper on its own: what it hands XGBoost arrives (a closed-form fit), its matrices
// hold the rows asked for, and every failure, in the wrapper's checks or inside XGBoost, is a
// kareus::Error that names it.
#include "kareus/xgb/booster.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "common/error_of.hpp"
#include "kareus/core/error.hpp"

namespace kareus::xgb {
namespace {

using ::kareus::testing::error_of;

// One feature, eight distinct values, a step target: a deep enough tree separates every value.
FeatureMatrix steps(std::vector<double>& y) {
  std::vector<std::vector<double>> rows;
  for (int i = 0; i < 8; ++i) {
    rows.push_back({static_cast<double>(i)});
    y.push_back(i < 3 ? 1.0 : (i < 6 ? 5.0 : -2.0));
  }
  return FeatureMatrix::from_rows(rows);
}

// Parameters under which one round is the exact least-squares tree: every row and column used,
// no shrinkage (eta 1), no L2 penalty on leaf weights (lambda 0), leaves of one row allowed.
BoosterParams exact() {
  BoosterParams p;
  p.rounds = 1;
  p.eta = 1.0;
  p.subsample = 1.0;
  p.colsample_bytree = 1.0;
  p.min_child_weight = 0.0;
  p.max_depth = 4;
  p.extra = {{"lambda", "0"}};
  return p;
}

TEST(XgbFeatureMatrix, FromRowsIsRowMajorInFloat) {
  const auto m = FeatureMatrix::from_rows({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.5}});
  EXPECT_EQ(m.rows, 2u);
  EXPECT_EQ(m.cols, 3u);
  EXPECT_EQ(m.values, (std::vector<float>{1, 2, 3, 4, 5, 6.5f}));
  const auto empty = FeatureMatrix::from_rows({});
  EXPECT_EQ(empty.rows, 0u);
  EXPECT_EQ(empty.cols, 0u);
}

TEST(XgbFeatureMatrix, RaggedRowsAreRefusedWithBothLengths) {
  EXPECT_EQ(error_of([] {
              FeatureMatrix::from_rows({{1.0, 2.0}, {3.0}});
            }),
            "feature rows differ in length: 2 and 1");
}

TEST(XgbFeatureMatrix, SelectKeepsOrderAndRepeats) {
  const auto m = FeatureMatrix::from_rows({{0, 1}, {10, 11}, {20, 21}});
  const auto s = m.select({2, 0, 2});
  EXPECT_EQ(s.rows, 3u);
  EXPECT_EQ(s.cols, 2u);
  EXPECT_EQ(s.values, (std::vector<float>{20, 21, 0, 1, 20, 21}));
}

TEST(XgbFeatureMatrix, SelectRefusesARowPastTheEnd) {
  const auto m = FeatureMatrix::from_rows({{0, 1}, {10, 11}});
  EXPECT_EQ(error_of([&] { m.select({1, 2}); }), "feature row 2 selected from 2 rows");
}

TEST(XgbBooster, OneExactRoundReproducesAStepTarget) {
  std::vector<double> y;
  const FeatureMatrix x = steps(y);
  const auto predicted = Booster(x, y, exact()).predict(x);
  ASSERT_EQ(predicted.size(), y.size());
  for (std::size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(predicted[i], y[i], 1e-5) << "row " << i;
}

TEST(XgbBooster, ParametersReachXGBoost) {
  std::vector<double> y;
  const FeatureMatrix x = steps(y);
  // Half the step (eta 0.5) from XGBoost's base score of 0.5: each prediction moves half way.
  BoosterParams half = exact();
  half.eta = 0.5;
  const auto h = Booster(x, y, half).predict(x);
  for (std::size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(h[i], 0.5 + 0.5 * (y[i] - 0.5), 1e-5);
  // A depth-1 tree has two leaves: at most two distinct predictions.
  BoosterParams stump = exact();
  stump.max_depth = 1;
  const auto s = Booster(x, y, stump).predict(x);
  std::vector<double> distinct(s);
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  EXPECT_EQ(distinct.size(), 2u);
}

TEST(XgbBooster, SameSeedSameModelOtherSeedOtherSubsample) {
  std::vector<std::vector<double>> rows;
  std::vector<double> y;
  for (int i = 0; i < 64; ++i) {
    rows.push_back({static_cast<double>(i % 8), static_cast<double>(i / 8)});
    y.push_back((i % 8) * (i / 8) + 0.1 * i);
  }
  const auto x = FeatureMatrix::from_rows(rows);
  BoosterParams p;
  p.rounds = 20;
  p.seed = 7;
  const auto a = Booster(x, y, p).predict(x);
  EXPECT_EQ(a, Booster(x, y, p).predict(x));
  p.seed = 8;
  EXPECT_NE(a, Booster(x, y, p).predict(x)) << "subsample 0.8 draws other rows";
}

TEST(XgbBooster, MovedBoosterPredictsAsTheOriginal) {
  std::vector<double> y;
  const FeatureMatrix x = steps(y);
  Booster a(x, y, exact());
  const auto before = a.predict(x);
  Booster b(std::move(a));
  EXPECT_EQ(b.predict(x), before);
  Booster c(x, std::vector<double>(y.size(), 0.0), exact());
  c = std::move(b);
  EXPECT_EQ(c.predict(x), before);
}

TEST(XgbBooster, WrapperChecksNameWhatIsWrong) {
  std::vector<double> y;
  const FeatureMatrix x = steps(y);
  y.pop_back();
  EXPECT_EQ(error_of([&] { Booster(x, y, exact()); }), "XGBoost training: 7 labels for 8 rows");
  EXPECT_EQ(error_of([] { Booster(FeatureMatrix{}, {}, exact()); }),
            "XGBoost needs a non-empty feature matrix, got 0 x 0");
  y.push_back(0.0);
  const Booster b(x, y, exact());
  EXPECT_EQ(error_of([&] { b.predict(FeatureMatrix{}); }),
            "XGBoost needs a non-empty feature matrix, got 0 x 0");
}

TEST(XgbBooster, XGBoostsOwnErrorsBecomeKareusErrors) {
  std::vector<double> y;
  const FeatureMatrix x = steps(y);
  BoosterParams bad = exact();
  bad.max_depth = -2;
  const std::string depth = error_of([&] { Booster(x, y, bad); });
  EXPECT_EQ(depth.rfind("XGBoost ", 0), 0u) << depth;
  EXPECT_NE(depth.find("max_depth"), std::string::npos) << depth;
  BoosterParams unknown_value = exact();
  unknown_value.extra = {{"tree_method", "no-such-method"}};
  const std::string method = error_of([&] { Booster(x, y, unknown_value); });
  EXPECT_EQ(method.rfind("XGBoost ", 0), 0u) << method;
  // A model trained on one feature asked about two.
  const Booster b(x, y, exact());
  const std::string shape = error_of([&] {
    b.predict(FeatureMatrix::from_rows({{1.0, 2.0}, {3.0, 4.0}}));
  });
  EXPECT_EQ(shape.rfind("XGBoost XGBoosterPredict failed: ", 0), 0u) << shape;
}

}  // namespace
}  // namespace kareus::xgb
