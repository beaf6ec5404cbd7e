// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <type_traits>

#include "kareus/core/units.hpp"

namespace kareus {
namespace {

TEST(Units, PowerTimesTimeIsEnergy) {
  const Joules e = Watts(85.0) * Seconds(2.0);
  EXPECT_DOUBLE_EQ(e.value(), 170.0);
  EXPECT_DOUBLE_EQ((e / Seconds(2.0)).value(), 85.0);
  EXPECT_DOUBLE_EQ((e / Watts(85.0)).value(), 2.0);
}

TEST(Units, DistinctTypesDoNotMix) {
  static_assert(!std::is_convertible_v<Seconds, Joules>);
  static_assert(!std::is_convertible_v<double, Seconds>);
  static_assert(std::is_same_v<decltype(Watts(1) * Seconds(1)), Joules>);
}

TEST(Units, Conversions) {
  EXPECT_DOUBLE_EQ(milliseconds(5).value(), 0.005);
  EXPECT_DOUBLE_EQ(to_milliseconds(Seconds(0.25)), 250.0);
  EXPECT_DOUBLE_EQ(to_hours(Seconds(7200)), 2.0);
  EXPECT_LT(MHz(900), MHz(1410));
  EXPECT_DOUBLE_EQ(Seconds(3) / Seconds(2), 1.5);
}

}  // namespace
}  // namespace kareus
