// SPDX-License-Identifier: Apache-2.0
#include "kareus/xgb/booster.hpp"

#include <gtest/gtest.h>

#include "kareus/core/error.hpp"
#include "kareus/search/surrogate.hpp"

namespace kareus::search {
namespace {

FeatureMatrix grid(std::vector<double>& y) {
  std::vector<std::vector<double>> rows;
  for (int i = 0; i < 40; ++i) {
    rows.push_back({static_cast<double>(i), static_cast<double>(i % 3)});
    y.push_back(2.0 * i + (i % 3));
  }
  return FeatureMatrix::from_rows(rows);
}

TEST(XGBoost, FitsASmoothFunctionAndIsDeterministic) {
  std::vector<double> y;
  const FeatureMatrix x = grid(y);
  BoosterParams params;
  params.seed = 3;
  const auto a = Booster(x, y, params).predict(x);
  const auto b = Booster(x, y, params).predict(x);
  EXPECT_EQ(a, b);
  double worst = 0.0;
  for (std::size_t i = 0; i < y.size(); ++i) worst = std::max(worst, std::abs(a[i] - y[i]));
  EXPECT_LT(worst, 6.0);  // range of y is 80
}

TEST(XGBoost, ErrorsAreKareusErrors) {
  std::vector<double> y;
  const FeatureMatrix x = grid(y);
  y.pop_back();
  EXPECT_THROW(Booster(x, y, {}), Error);
  BoosterParams bad;
  bad.max_depth = -2;
  y.push_back(0);
  try {
    Booster(x, y, bad);
    FAIL() << "negative max_depth accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("XGBoost"), std::string::npos) << e.what();
  }
}

TEST(XGBoost, EnsembleSpreadIsZeroOnlyWhereMembersAgree) {
  std::vector<double> y;
  const FeatureMatrix x = grid(y);
  const ObjectiveValues values{y, y};
  const auto spread = ensemble_spread(x, values, x, {}, {5, 0.8, 42});
  ASSERT_EQ(spread.time_s.size(), x.rows);
  double total = 0.0;
  for (double s : spread.time_s) total += s;
  EXPECT_GT(total, 0.0);
  EXPECT_EQ(spread.time_s, spread.dynamic_j);
}

}  // namespace
}  // namespace kareus::search
