// SPDX-License-Identifier: Apache-2.0
#include "kareus/core/statistics.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace kareus {
namespace {

TEST(Statistics, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_DOUBLE_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_TRUE(std::isnan(median({})));
}

TEST(Statistics, QuantileInterpolatesBetweenOrderStatistics) {
  const std::vector<double> v = {10.0, 0.0, 40.0, 20.0, 30.0};  // sorted: 0 10 20 30 40
  EXPECT_DOUBLE_EQ(quantile(v, 0.0), 0.0);
  EXPECT_DOUBLE_EQ(quantile(v, 1.0), 40.0);
  EXPECT_DOUBLE_EQ(quantile(v, 0.5), 20.0);
  EXPECT_DOUBLE_EQ(quantile(v, 0.1), 4.0);   // 0.4 of the way from 0 to 10
  EXPECT_DOUBLE_EQ(quantile(v, 0.9), 36.0);  // 0.6 of the way from 30 to 40
  EXPECT_DOUBLE_EQ(quantile({5.0}, 0.3), 5.0);
  EXPECT_TRUE(std::isnan(quantile({}, 0.5)));
}

TEST(Statistics, QuantileAtOneHalfIsTheMedian) {
  const std::vector<double> even = {7.0, 1.0, 4.0, 9.0};
  EXPECT_DOUBLE_EQ(quantile(even, 0.5), median(even));
}

}  // namespace
}  // namespace kareus
