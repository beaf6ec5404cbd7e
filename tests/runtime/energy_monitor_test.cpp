// SPDX-License-Identifier: Apache-2.0
#include "kareus/runtime/energy_monitor.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "fake_nvml/fake_nvml_fixture.hpp"

namespace kareus::runtime {
namespace {

using kareus::testing::FakeNvml;
using kareus::testing::two_gpu_script;

// The fake's power is constant while the clock is, so energy must be power x window time; the
// 5 % margin covers the counter's 1 mJ steps and the reads around the window's timestamps.
void expect_power_times_time(Joules energy, Watts power, Seconds time) {
  EXPECT_NEAR(energy.value(), (power * time).value(), 0.05 * (power * time).value());
}

TEST(EnergyMonitor, MeasuresNestedWindowsFromTheCounter) {
  FakeNvml fake;
  auto nvml = std::make_shared<const nvml::Nvml>();
  nvml->set_locked_sm_clock(0, MHz(900));
  EnergyMonitor monitor(nvml, {0, 1});
  EXPECT_FALSE(monitor.integrates_power(0));
  monitor.begin_window("iteration");
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  monitor.begin_window("forward");
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  const EnergyMeasurement forward = monitor.end_window("forward");
  const EnergyMeasurement iteration = monitor.end_window("iteration");
  EXPECT_GT(iteration.time, forward.time);
  ASSERT_EQ(iteration.gpus, (std::vector<unsigned>{0, 1}));
  expect_power_times_time(iteration.gpu_energy[0], Watts(52 + 0.25 * 900), iteration.time);
  expect_power_times_time(iteration.gpu_energy[1], Watts(22 + 0.15 * 1665), iteration.time);
  expect_power_times_time(forward.gpu_energy[0], Watts(52 + 0.25 * 900), forward.time);
  EXPECT_DOUBLE_EQ(iteration.total_energy.value(),
                   (iteration.gpu_energy[0] + iteration.gpu_energy[1]).value());
}

TEST(EnergyMonitor, IntegratesPowerWhereTheCounterIsUnsupported) {
  auto script = two_gpu_script();
  script["devices"][1]["errors"]["nvmlDeviceGetTotalEnergyConsumption"] = "NOT_SUPPORTED";
  FakeNvml fake(script);
  auto nvml = std::make_shared<const nvml::Nvml>();
  EnergyMonitor monitor(nvml, {1}, {milliseconds(10)});
  EXPECT_TRUE(monitor.integrates_power(1));
  monitor.begin_window("w");
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  const EnergyMeasurement m = monitor.end_window("w");
  expect_power_times_time(m.gpu_energy[0], Watts(22 + 0.15 * 1665), m.time);
}

TEST(EnergyMonitor, OtherCounterErrorsAreNotHidden) {
  auto script = two_gpu_script();
  script["devices"][0]["errors"]["nvmlDeviceGetTotalEnergyConsumption"] = "GPU_IS_LOST";
  FakeNvml fake(script);
  EXPECT_THROW(EnergyMonitor(std::make_shared<const nvml::Nvml>(), {0}), nvml::NvmlError);
}

TEST(EnergyMonitor, WindowNamesMustPair) {
  FakeNvml fake;
  EnergyMonitor monitor(std::make_shared<const nvml::Nvml>(), {0});
  monitor.begin_window("a");
  try {
    monitor.begin_window("a");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "energy monitor: window \"a\" is already open");
  }
  try {
    monitor.end_window("b");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "energy monitor: no window \"b\" is open");
  }
}

}  // namespace
}  // namespace kareus::runtime
