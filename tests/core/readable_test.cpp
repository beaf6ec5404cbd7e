// SPDX-License-Identifier: Apache-2.0
#include "kareus/core/readable.hpp"

#include <gtest/gtest.h>

namespace kareus {
namespace {

TEST(Readable, EnergyScalesToThreeSignificantDigits) {
  EXPECT_EQ(readable_energy(Joules(0)), "0.00 J");
  EXPECT_EQ(readable_energy(Joules(950)), "950 J");
  EXPECT_EQ(readable_energy(Joules(999.4)), "999 J");
  // 999.6 J rounds to 1000 at three digits, so it is written in the next unit.
  EXPECT_EQ(readable_energy(Joules(999.6)), "1.00 kJ");
  EXPECT_EQ(readable_energy(Joules(12'345)), "12.3 kJ");
  EXPECT_EQ(readable_energy(Joules(512'400)), "512 kJ");
  EXPECT_EQ(readable_energy(Joules(1'370'000)), "1.37 MJ");
  EXPECT_EQ(readable_energy(Joules(2.5e12)), "2500 GJ");
}

TEST(Readable, DurationPicksMillisecondsSecondsMinutesOrHours) {
  EXPECT_EQ(readable_duration(0.25), "250 ms");
  EXPECT_EQ(readable_duration(12.34), "12.3 s");
  EXPECT_EQ(readable_duration(252), "4.2 min");
  EXPECT_EQ(readable_duration(5400), "1.5 h");
}

}  // namespace
}  // namespace kareus
