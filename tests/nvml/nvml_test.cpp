// SPDX-License-Identifier: Apache-2.0
#include "kareus/nvml/nvml.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <thread>

#include "common/error_of.hpp"
#include "fake_nvml/fake_nvml_fixture.hpp"

namespace kareus::nvml {
namespace {

using kareus::testing::error_of;

using kareus::testing::FakeNvml;
using kareus::testing::two_gpu_script;

int code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const NvmlError& e) {
    return e.code();
  }
  return 0;
}

TEST(Nvml, ReadsDevicesFromTheLibrary) {
  FakeNvml fake;
  Nvml nvml;
  ASSERT_EQ(nvml.device_count(), 2u);
  EXPECT_EQ(nvml.name(0), "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(nvml.uuid(1), "GPU-fake-1");
  EXPECT_EQ(nvml.name(1), "NVIDIA GeForce RTX 3080 Ti");
  EXPECT_EQ(nvml.sm_clock(0), MHz(1410));
  EXPECT_DOUBLE_EQ(nvml.power(0).value(), 52.0 + 0.25 * 1410);
  EXPECT_DOUBLE_EQ(nvml.power_limit(0).value(), 400.0);
  EXPECT_DOUBLE_EQ(nvml.power_limit(1).value(), 350.0);
  const PowerLimitRange range = nvml.power_limit_constraints(0);
  EXPECT_DOUBLE_EQ(range.min.value(), 100.0);
  EXPECT_DOUBLE_EQ(range.max.value(), 400.0);
}

TEST(Nvml, SupportedClocksAreThoseAtTheHighestMemoryClock) {
  FakeNvml fake;
  Nvml nvml;
  const auto a100 = nvml.supported_sm_clocks(0);
  ASSERT_EQ(a100.size(), 81u);
  EXPECT_EQ(a100.front(), MHz(1410));
  EXPECT_EQ(a100.back(), MHz(210));
  // GPU 1 has four memory clocks; only the 9501 MHz table reaches 2115 MHz.
  const auto ga102 = nvml.supported_sm_clocks(1);
  EXPECT_EQ(ga102.front(), MHz(2115));
  EXPECT_TRUE(std::is_sorted(ga102.begin(), ga102.end(), std::greater<>()));
}

TEST(Nvml, LocksAndResetsTheSmClock) {
  FakeNvml fake;
  Nvml nvml;
  nvml.set_locked_sm_clock(0, MHz(1200));
  EXPECT_EQ(nvml.sm_clock(0), MHz(1200));
  EXPECT_DOUBLE_EQ(nvml.power(0).value(), 52.0 + 0.25 * 1200);
  nvml.set_locked_sm_clock(1, MHz(990));
  nvml.reset_locked_sm_clocks(0);
  EXPECT_EQ(nvml.sm_clock(0), MHz(1410));
  EXPECT_EQ(fake.log(), (std::vector<std::string>{"nvmlDeviceSetGpuLockedClocks 0 1200 1200",
                                                  "nvmlDeviceSetGpuLockedClocks 1 990 990",
                                                  "nvmlDeviceResetGpuLockedClocks 0"}));
}

TEST(Nvml, EnergyCounterFollowsPowerTimesWallTime) {
  FakeNvml fake;
  Nvml nvml;
  nvml.set_locked_sm_clock(0, MHz(810));
  const double watts = 52.0 + 0.25 * 810;
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const Joules e0 = nvml.total_energy(0);
  const auto t1 = Clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  const auto t2 = Clock::now();
  const Joules e1 = nvml.total_energy(0);
  const auto t3 = Clock::now();
  const auto seconds = [](auto d) { return std::chrono::duration<double>(d).count(); };
  // The counter has 1 mJ resolution; the interval between the reads lies within [t1, t2]..[t0, t3].
  EXPECT_GE((e1 - e0).value(), watts * seconds(t2 - t1) - 1e-3);
  EXPECT_LE((e1 - e0).value(), watts * seconds(t3 - t0) + 1e-3);
}

TEST(Nvml, MissingLibraryIsOneClearError) {
  setenv("KAREUS_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
  const std::string msg = error_of([] { Nvml nvml; });
  unsetenv("KAREUS_NVML_LIBRARY");
  EXPECT_EQ(msg.rfind("NVML unavailable: cannot load /nonexistent/libnvidia-ml.so.1 (", 0), 0u)
      << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos);
  EXPECT_EQ(code_of([] { Nvml nvml("/nonexistent/libnvidia-ml.so.1"); }),
            12 /* NVML_ERROR_LIBRARY_NOT_FOUND */);
}

TEST(Nvml, DefaultsToTheDriverLibraryName) {
  unsetenv("KAREUS_NVML_LIBRARY");
  EXPECT_EQ(nvml_library_path(), "libnvidia-ml.so.1");
  setenv("KAREUS_NVML_LIBRARY", "/opt/x/libnvidia-ml.so", 1);
  EXPECT_EQ(nvml_library_path(), "/opt/x/libnvidia-ml.so");
  unsetenv("KAREUS_NVML_LIBRARY");
}

TEST(Nvml, LibraryWithoutNvmlSymbolsIsRejected) {
  const std::string msg = error_of([] { Nvml nvml("libm.so.6"); });
  EXPECT_EQ(msg, "NVML unavailable: libm.so.6 does not export nvmlInit_v2 (driver too old?)");
}

TEST(Nvml, InitFailureIsReported) {
  auto script = two_gpu_script();
  script["errors"]["nvmlInit_v2"] = "DRIVER_NOT_LOADED";
  FakeNvml fake(script);
  EXPECT_EQ(error_of([] { Nvml nvml; }),
            "NVML unavailable: nvmlInit_v2 failed: Driver Not Loaded (NVML code 9)");
}

TEST(Nvml, SessionsCanBeOpenedAgainAfterShutdown) {
  FakeNvml fake;
  { Nvml first; }
  Nvml second;
  EXPECT_EQ(second.device_count(), 2u);
}

TEST(Nvml, NoPermissionSaysHowToGetIt) {
  auto script = two_gpu_script();
  script["devices"][0]["errors"]["nvmlDeviceSetGpuLockedClocks"] = "NO_PERMISSION";
  FakeNvml fake(script);
  Nvml nvml;
  EXPECT_EQ(error_of([&] { nvml.set_locked_sm_clock(0, MHz(1200)); }),
            "NVML nvmlDeviceSetGpuLockedClocks(gpu 0, 1200 MHz): Insufficient Permissions (NVML "
            "code 4); changing clocks needs root: run as root or go through kareusd");
  nvml.set_locked_sm_clock(1, MHz(1200));  // only GPU 0 is scripted to refuse
  EXPECT_EQ(fake.log(), std::vector<std::string>{"nvmlDeviceSetGpuLockedClocks 1 1200 1200"});
}

TEST(Nvml, RejectsBadArgumentsBeforeOrAtTheLibrary) {
  FakeNvml fake;
  Nvml nvml;
  EXPECT_EQ(error_of([&] { nvml.name(7); }),
            "NVML nvmlDeviceGetHandleByIndex_v2(gpu 7): Invalid Argument (NVML code 2)");
  EXPECT_EQ(error_of([&] { nvml.set_locked_sm_clock(0, MHz(1200.5)); }),
            "NVML: sm clock = 1200.5: must be a positive whole number of MHz");
  EXPECT_EQ(code_of([&] { nvml.set_locked_sm_clock(0, MHz(1500)); }), 2);
  EXPECT_TRUE(fake.log().empty());
}

// Every wrapped call reports an injected error with the NVML function's name and code.
struct InjectedCase {
  const char* function;
  std::function<void(const Nvml&)> call;
  // gtest would otherwise print the struct's raw bytes into ctest's test names.
  friend void PrintTo(const InjectedCase& c, std::ostream* os) { *os << c.function; }
};

class InjectedError : public ::testing::TestWithParam<InjectedCase> {};

TEST_P(InjectedError, IsReportedWithTheFunctionName) {
  auto script = two_gpu_script();
  script["errors"][GetParam().function] = "GPU_IS_LOST";
  FakeNvml fake(script);
  Nvml nvml;
  const std::string msg = error_of([&] { GetParam().call(nvml); });
  EXPECT_EQ(msg.rfind(std::string("NVML ") + GetParam().function, 0), 0u) << msg;
  EXPECT_NE(msg.find("GPU is lost (NVML code 15)"), std::string::npos) << msg;
  EXPECT_EQ(code_of([&] { GetParam().call(nvml); }), 15);
}

INSTANTIATE_TEST_SUITE_P(
    EveryCall, InjectedError,
    ::testing::Values(
        InjectedCase{"nvmlDeviceGetCount_v2", [](const Nvml& n) { n.device_count(); }},
        InjectedCase{"nvmlDeviceGetHandleByIndex_v2", [](const Nvml& n) { n.name(0); }},
        InjectedCase{"nvmlDeviceGetName", [](const Nvml& n) { n.name(0); }},
        InjectedCase{"nvmlDeviceGetUUID", [](const Nvml& n) { n.uuid(0); }},
        InjectedCase{"nvmlDeviceGetTotalEnergyConsumption",
                     [](const Nvml& n) { n.total_energy(0); }},
        InjectedCase{"nvmlDeviceGetPowerUsage", [](const Nvml& n) { n.power(0); }},
        InjectedCase{"nvmlDeviceGetClockInfo", [](const Nvml& n) { n.sm_clock(0); }},
        InjectedCase{"nvmlDeviceGetSupportedMemoryClocks",
                     [](const Nvml& n) { n.supported_sm_clocks(0); }},
        InjectedCase{"nvmlDeviceGetSupportedGraphicsClocks",
                     [](const Nvml& n) { n.supported_sm_clocks(0); }},
        InjectedCase{"nvmlDeviceSetGpuLockedClocks",
                     [](const Nvml& n) { n.set_locked_sm_clock(0, MHz(1200)); }},
        InjectedCase{"nvmlDeviceResetGpuLockedClocks",
                     [](const Nvml& n) { n.reset_locked_sm_clocks(0); }},
        InjectedCase{"nvmlDeviceGetPowerManagementLimit", [](const Nvml& n) { n.power_limit(0); }},
        InjectedCase{"nvmlDeviceGetPowerManagementLimitConstraints",
                     [](const Nvml& n) { n.power_limit_constraints(0); }}),
    [](const ::testing::TestParamInfo<InjectedCase>& info) {
      return std::string(info.param.function);
    });

}  // namespace
}  // namespace kareus::nvml
