// SPDX-License-Identifier: Apache-2.0
// The clock policy of the real-GPU executor against the scripted fake NVML: no clock call at
// all without allow_clock_control, locks and one reset with it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fake_nvml_fixture.hpp"
#include "kareus/core/error.hpp"
#include "kareus/executor/gpu_clock.hpp"

namespace kareus::executor {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(GpuClock, WithoutControlOnlyTheCurrentClockAndNoNvmlCall) {
  testing::FakeNvml fake;
  {
    GpuClock clock(std::make_shared<nvml::Nvml>(), 0, false, MHz(1410));
    EXPECT_FALSE(clock.controlled());
    EXPECT_THAT(clock.allowed(), ElementsAre(MHz(1410)));
    EXPECT_FALSE(clock.apply(MHz(1410)));
    try {
      clock.apply(MHz(1200));
      FAIL() << "a clock change was accepted without allow_clock_control";
    } catch (const Error& e) {
      EXPECT_EQ(e.field(), "clock_mhz");
      EXPECT_THAT(e.what(), HasSubstr("allow_clock_control"));
      EXPECT_THAT(e.what(), HasSubstr("1200"));
    }
    EXPECT_THAT(clock.describe(), HasSubstr("not controlled"));
    EXPECT_THAT(clock.describe(), HasSubstr("1410 MHz"));
  }
  EXPECT_TRUE(fake.log().empty());
}

TEST(GpuClock, WithControlLocksOncePerChangeAndResetsAtTheEnd) {
  testing::FakeNvml fake;
  {
    GpuClock clock(std::make_shared<nvml::Nvml>(), 0, true, MHz(1410));
    EXPECT_TRUE(clock.controlled());
    // Fixture GPU 0: 1410 down to 210 MHz in 15 MHz steps.
    ASSERT_EQ(clock.allowed().size(), 81u);
    EXPECT_EQ(clock.allowed().front(), MHz(1410));
    EXPECT_TRUE(clock.apply(MHz(1410)));
    EXPECT_FALSE(clock.apply(MHz(1410)));
    EXPECT_TRUE(clock.apply(MHz(1200)));
    EXPECT_THROW(clock.apply(MHz(1234)), Error);
    EXPECT_THAT(clock.describe(), HasSubstr("(allow_clock_control)"));
  }
  EXPECT_THAT(fake.log(), ElementsAre("nvmlDeviceSetGpuLockedClocks 0 1410 1410",
                                      "nvmlDeviceSetGpuLockedClocks 0 1200 1200",
                                      "nvmlDeviceResetGpuLockedClocks 0"));
}

TEST(GpuClock, WithControlButNoLockNothingToReset) {
  testing::FakeNvml fake;
  { GpuClock clock(std::make_shared<nvml::Nvml>(), 1, true, MHz(2115)); }
  EXPECT_TRUE(fake.log().empty());
}

}  // namespace
}  // namespace kareus::executor
