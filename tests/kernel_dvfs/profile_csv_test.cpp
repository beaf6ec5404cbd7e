// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>

#include "kareus/core/error.hpp"
#include "kareus/kernel_dvfs/profile_csv.hpp"

namespace kareus::kernel_dvfs {
namespace {

std::string error_of(const std::string& csv) {
  try {
    parse_profile_csv(csv, "p.csv", std::nullopt);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ProfileCsv, ReadsKernelsInFileOrderWithPasses) {
  const auto seq = parse_profile_csv(
      "kernel,clock_mhz,time_s,energy_j,pass\n"
      "gemm,1000,0.002,0.5,forward\n"
      "gemm,1500,0.0015,0.6,forward\n"
      "add,1500,0.001,0.2,backward\n"
      "add,1000,0.001,0.15,backward\n",
      "p.csv", std::nullopt);
  ASSERT_EQ(seq.clocks.size(), 2u);
  EXPECT_EQ(seq.clocks.back(), MHz(1500));
  ASSERT_EQ(seq.kernels.size(), 2u);
  EXPECT_EQ(seq.kernels[0].name, "gemm");
  EXPECT_EQ(seq.kernels[1].pass, Direction::kBackward);
  EXPECT_EQ(seq.kernels[1].energy[0], Joules(0.15));
  EXPECT_TRUE(seq.has_passes());
}

TEST(ProfileCsv, PassColumnIsOptional) {
  const auto seq =
      parse_profile_csv("kernel,clock_mhz,time_s,energy_j\na,900,0.1,1\n", "p.csv", std::nullopt);
  EXPECT_FALSE(seq.has_passes());
}

TEST(ProfileCsv, RejectsMissingColumn) {
  EXPECT_EQ(error_of("kernel,clock_mhz,time_s\na,900,0.1\n"),
            "p.csv: missing required column 'energy_j' (header has: kernel,clock_mhz,time_s)");
}

TEST(ProfileCsv, RejectsMissingField) {
  EXPECT_EQ(error_of("kernel,clock_mhz,time_s,energy_j\na,900,,1\n"),
            "p.csv:2: column 'time_s' = (empty): a value is required");
}

TEST(ProfileCsv, RejectsNegativeDuration) {
  EXPECT_EQ(error_of("kernel,clock_mhz,time_s,energy_j\na,900,-0.1,1\n"),
            "p.csv:2: column 'time_s' = -0.1: expected a duration > 0 and at most 3600 seconds");
  EXPECT_EQ(error_of("kernel,clock_mhz,time_s,energy_j\na,900,1e300,1\n"),
            "p.csv:2: column 'time_s' = 1e300: expected a duration > 0 and at most 3600 seconds");
  EXPECT_EQ(error_of("kernel,clock_mhz,time_s,energy_j\na,900,0x1p-3,1\n"),
            "p.csv:2: column 'time_s' = 0x1p-3: expected a finite number in decimal, such as 1.5 or "
            "2e-3");
}

TEST(ProfileCsv, RejectsUnknownClock) {
  EXPECT_EQ(error_of("kernel,clock_mhz,time_s,energy_j\n"
                     "a,900,0.1,1\na,1000,0.09,1.1\nb,900,0.1,1\nb,950,0.1,1\n"),
            "p.csv:5: column 'clock_mhz' = 950: unknown clock; allowed (the clocks of kernel 'a', "
            "the first in the file): 900, 1000 MHz");
  try {
    parse_profile_csv("kernel,clock_mhz,time_s,energy_j\na,905,0.1,1\n", "g.csv",
                      std::vector<MHz>{MHz(900), MHz(915)});
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "g.csv:2: column 'clock_mhz' = 905: not a supported clock of the GPU; allowed: "
                 "900, 915 MHz");
  }
}

// Line 3 holds the first kernel's second clock, one no GPU has: that line is named, and its clock
// is not offered as an allowed one when a later kernel's row is checked.
TEST(ProfileCsv, NamesTheLineOfAClockNoGpuHas) {
  const std::string profile =
      "kernel,clock_mhz,time_s,energy_j\n"
      "a,1410,0.1,1\na,{},0.1,1\na,1200,0.1,1\nb,1410,0.1,1\nb,1200,0.1,1\nb,1300,0.1,1\n";
  EXPECT_EQ(error_of(fmt::format(fmt::runtime(profile), "1740.5")),
            "p.csv:3: column 'clock_mhz' = 1740.5: a whole number of MHz from 1 to 10000");
  EXPECT_EQ(error_of(fmt::format(fmt::runtime(profile), "1e300")),
            "p.csv:3: column 'clock_mhz' = 1e300: a whole number of MHz from 1 to 10000");
  // With the GPU's clock table the unsupported one is found on its own line, before the rows of
  // later kernels are compared.
  try {
    parse_profile_csv(fmt::format(fmt::runtime(profile), "1745"), "g.csv",
                      std::vector<MHz>{MHz(1200), MHz(1300), MHz(1410)});
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "g.csv:3: column 'clock_mhz' = 1745: not a supported clock of the GPU; allowed: "
                 "1200, 1300, 1410 MHz");
  }
}

TEST(ProfileCsv, RejectsKernelMissingAClock) {
  EXPECT_EQ(error_of("kernel,clock_mhz,time_s,energy_j\na,900,0.1,1\na,1000,0.09,1.1\n"
                     "b,900,0.1,1\n"),
            "p.csv: kernel 'b' has no row at 1000 MHz; every kernel needs a row at each clock "
            "(900, 1000 MHz)");
}

TEST(ProfileCsv, RejectsDuplicatesAndBadPasses) {
  EXPECT_NE(error_of("kernel,clock_mhz,time_s,energy_j\na,900,0.1,1\na,900,0.1,1\n")
                .find("already has a row at this clock"),
            std::string::npos);
  EXPECT_EQ(error_of("kernel,clock_mhz,time_s,energy_j,pass\na,900,0.1,1,sideways\n"),
            "p.csv:2: column 'pass' = sideways: expected forward, backward or empty");
  EXPECT_NE(error_of("kernel,clock_mhz,time_s,energy_j,pass\na,900,0.1,1,forward\n"
                     "a,1000,0.1,1,backward\n")
                .find("was given pass 'forward'"),
            std::string::npos);
  EXPECT_EQ(error_of("kernel,clock_mhz,time_s,energy_j\n"),
            "p.csv: no rows, expected one per kernel and clock");
}

}  // namespace
}  // namespace kareus::kernel_dvfs
