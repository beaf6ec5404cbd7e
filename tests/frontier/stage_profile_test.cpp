// SPDX-License-Identifier: Apache-2.0
// The Perseus stage profile reader's bounds: clocks are whole MHz, durations and energies within
// the bounds of kareus/core/limits.hpp, and the instructions of its problem bounded.
#include "kareus/frontier/stage_profile.hpp"

#include <gtest/gtest.h>

#include <string>

#include "common/error_of.hpp"

namespace kareus::frontier {
namespace {

using testing::error_of;

std::string error_in(const std::string& rows) {
  return error_of(
      [&] { parse_stage_profile("stage,instruction,frequency,time,energy\n" + rows, "s.csv"); });
}

// A clock of 1e300 MHz used to reach `pipeline-solve --plan` as F0@1e+300.
TEST(StageProfile, ClocksAreWholeMegahertz) {
  for (const std::string clock : {"1e300", "1740.5", "0", "10001", "0x6c0"}) {
    const std::string e = error_in("0,forward," + clock + ",0.1,1\n0,backward,1410,0.2,2\n");
    EXPECT_EQ(e.rfind("s.csv:2: column 'frequency' = " + clock + ": ", 0), 0u) << e;
  }
  EXPECT_EQ(error_in("0,forward,1740.5,0.1,1\n0,backward,1410,0.2,2\n"),
            "s.csv:2: column 'frequency' = 1740.5: a whole number of MHz from 1 to 10000");
}

TEST(StageProfile, DurationsEnergiesAndStagesAreBounded) {
  EXPECT_EQ(error_in("0,forward,1410,3601,1\n"),
            "s.csv:2: column 'time' = 3601: expected at most 3600 seconds for one instruction");
  EXPECT_EQ(error_in("0,forward,1410,1,2e9\n"),
            "s.csv:2: column 'energy' = 2e9: expected at most 1e+09 joules");
  EXPECT_EQ(error_in("125000,forward,1410,1,1\n"),
            "s.csv:2: column 'stage' = 125000: expected a stage id from 0 to 124999 (at most "
            "250000 instructions per iteration)");
}

TEST(StageProfile, TheProblemBoundsItsInstructions) {
  const StageProfile profile = parse_stage_profile(
      "stage,instruction,frequency,time,energy\n0,forward,1410,0.1,1\n"
      "0,backward,1410,0.2,2\n1,forward,1410,0.1,1\n1,backward,1410,0.2,2\n",
      "s.csv");
  EXPECT_NO_THROW(pipeline_problem(profile, 62'500, Watts(60)));
  EXPECT_EQ(error_of([&] { pipeline_problem(profile, 1'000'000'000, Watts(60)); }),
            "pipeline problem: microbatches = 1000000000: 2 x 2 stages x 1000000000 microbatches "
            "= 4000000000 instructions per iteration; at most 250000 (62500 microbatches with 2 "
            "stages)");
}

}  // namespace
}  // namespace kareus::frontier
