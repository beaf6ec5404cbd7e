// SPDX-License-Identifier: Apache-2.0
// kareus devices against the fake NVML, and without a driver.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "common/run_cli.hpp"
#include "nvml/fake_nvml/fake_nvml_fixture.hpp"

namespace kareus {
namespace {

TEST(DevicesCli, ListsEveryGpuWithClocksPowerAndEnergyCounter) {
  auto script = testing::two_gpu_script();
  script["devices"][0]["uuid"] = "GPU-5a1c0fd2-1111-2222-3333-444455556666";
  script["devices"][1]["errors"] = {{"nvmlDeviceGetTotalEnergyConsumption", "NOT_SUPPORTED"}};
  const testing::FakeNvml fake(script);
  const auto r = testing::run_cli(KAREUS_BINARY, "devices --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto devices = nlohmann::json::parse(r.out)["devices"];
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0]["name"], "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(devices[0]["uuid"], "GPU-5a1c0fd2-1111-2222-3333-444455556666");
  EXPECT_EQ(devices[1]["uuid"], "GPU-fake-1");
  EXPECT_EQ(devices[0]["catalogue_gpu"], "a100-sxm4-40gb");
  EXPECT_EQ(devices[0]["sm_clock_mhz"], 1410);
  EXPECT_EQ(devices[0]["supported_sm_clocks_mhz"].size(), 81u);
  EXPECT_EQ(devices[0]["supported_sm_clocks_mhz"][0], 1410);
  EXPECT_EQ(devices[0]["power_limit_w"], 400);
  EXPECT_EQ(devices[0]["power_limit_min_w"], 100);
  EXPECT_TRUE(devices[0]["energy_counter"]);
  EXPECT_FALSE(devices[1]["energy_counter"]);
  // Reading devices never changes a clock.
  EXPECT_TRUE(fake.log().empty());

  const auto text = testing::run_cli(KAREUS_BINARY, "devices");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("210..1410 (81)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("GPU 1: no energy counter"), std::string::npos) << text.out;
}

TEST(DevicesCli, WithoutADriverSaysSoInOneLine) {
  setenv("KAREUS_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
  const auto r = testing::run_cli(KAREUS_BINARY, "devices");
  unsetenv("KAREUS_NVML_LIBRARY");
  EXPECT_EQ(r.exit_code, 4) << "a missing driver is the machine's to fix, not the command's";
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("NVML unavailable"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(VersionCli, PrintsTheProjectVersion) {
  const auto r = testing::run_cli(KAREUS_BINARY, "--version");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, std::string("kareus ") + KAREUS_PROJECT_VERSION + "\n");
  const auto daemon = testing::run_cli(KAREUSD_BINARY, "--version");
  EXPECT_EQ(daemon.exit_code, 0);
  EXPECT_EQ(daemon.out, std::string("kareusd ") + KAREUS_PROJECT_VERSION + "\n");
}

}  // namespace
}  // namespace kareus
