// SPDX-License-Identifier: Apache-2.0
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "common/error_of.hpp"
#include "kareus/core/error.hpp"
#include "kareus/core/json.hpp"
#include "kareus/core/paths.hpp"
#include "kareus/hardware/gpu_spec.hpp"

namespace kareus {
namespace {

TEST(GpuCatalogue, ANameTooLongForAFileIsAnUnknownGpu) {
  EXPECT_THAT(testing::error_of([] { load_gpu(std::string(400, 'x')); }),
              ::testing::HasSubstr("unknown GPU"));
}

TEST(GpuCatalogue, HasTheEvaluatedGpus) {
  const auto names = list_gpus();
  for (const char* n : {"a100-sxm4-40gb", "a100-sxm4-80gb", "h100-sxm", "h200", "a40", "rtx3080ti"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
}

TEST(GpuCatalogue, EveryGpuLoadsAndIsConsistent) {
  for (const auto& name : list_gpus()) {
    SCOPED_TRACE(name);
    const GpuSpec g = load_gpu(name);
    EXPECT_GT(g.sm_count, 0);
    EXPECT_TRUE(g.supports_clock(g.clock_max));
    EXPECT_FALSE(g.search_clocks().empty());
    EXPECT_EQ(g.search_clocks().front(), g.search_clock_max);
    // Voltage never falls with the clock.
    double last = 0;
    for (MHz f : g.supported_clocks()) {
      EXPECT_GE(g.voltage(f), last);
      last = g.voltage(f);
    }
    EXPECT_LT(g.static_power, g.power_limit_default);
  }
}

// Only the 80 GB A100 has kernel figures of its own (data/validation/kernel_figures.csv), so the
// 40 GB part's kernel and power constants are checked through it: both are the GA100 die at the
// same clocks, and only memory, idle power and the default clock may differ.
TEST(GpuCatalogue, A100VariantsShareTheDiesConstants) {
  const auto read = [](const std::string& name) {
    std::ifstream in(data_dir() / "gpus" / (name + ".json"));
    return Json::parse(in);
  };
  const Json a = read("a100-sxm4-40gb"), b = read("a100-sxm4-80gb");
  const std::set<std::string> may_differ = {"name",
                                            "display_name",
                                            "memory_capacity_gib",
                                            "memory_bandwidth_gbps",
                                            "memory_efficiency",
                                            "idle_power_w",
                                            "default_application_clock_mhz"};
  std::size_t compared = 0;
  for (const auto& [key, value] : a.items()) {
    if (may_differ.count(key) || key.front() == '_') continue;
    ASSERT_TRUE(b.contains(key)) << key;
    // What an entry says, without the words of its source.
    const auto number = [](Json j) {
      if (j.is_object()) j.erase("source");
      return j;
    };
    EXPECT_EQ(number(value), number(b.at(key))) << key;
    ++compared;
  }
  EXPECT_GT(compared, 40u);
}

TEST(GpuCatalogue, A100MatchesPublishedFigures) {
  const GpuSpec g = load_gpu("a100-sxm4-40gb");
  EXPECT_EQ(g.sm_count, 108);
  EXPECT_EQ(g.clock_max, MHz(1410));
  EXPECT_EQ(g.static_power, Watts(85));
  EXPECT_EQ(g.power_limit_default, Watts(400));
  // Kareus searches 1410 down to 900 MHz in 30 MHz steps: 18 clocks.
  EXPECT_EQ(g.search_clocks().size(), 18u);
  EXPECT_EQ(g.supported_clocks().size(), 81u);
  EXPECT_DOUBLE_EQ(g.voltage(MHz(900)), g.voltage_floor_v);
  // Idle power at a locked clock, measured: 56 W at 300 MHz, 61 at 900, 70 at 1200, 85 at 1410.
  EXPECT_DOUBLE_EQ(g.idle_power_at(MHz(900)).value(), 61.0);
  EXPECT_DOUBLE_EQ(g.idle_power_at(MHz(1410)).value(), 85.0);
}

// Measured on A100 with clocks locked: dynamic power per SM per MHz (proportional to V^2) is
// flat from 510 to about 1050 MHz, then x1.34 at 1200 and x1.89 at 1410 MHz relative to 900.
TEST(GpuCatalogue, A100VoltageCurveMatchesMeasuredPowerPerMhz) {
  const GpuSpec g = load_gpu("a100-sxm4-40gb");
  const auto relative = [&](double mhz) {
    const double v = g.voltage(MHz(mhz)) / g.voltage(MHz(900));
    return v * v;
  };
  EXPECT_NEAR(relative(510), 1.0, 1e-12);
  EXPECT_LT(relative(1050), 1.03);
  EXPECT_NEAR(relative(1200), 1.34, 0.02);
  EXPECT_NEAR(relative(1410), 1.89, 0.02);
}

// A100's AllReduce on 4 GPUs (ring, 64 MiB class) measured at 1410 MHz: algorithm bandwidth
// 11.2 / 22.4 / 42.6 / 77.7 / 128.9 / 144.7 GB/s on 1 / 2 / 4 / 8 / 16 / 32 CTAs. The bus
// bandwidth is 2(n-1)/n = 1.5 times that.
TEST(GpuCatalogue, CollectiveBandwidthFollowsCtaSweep) {
  const GpuSpec g = load_gpu("a100-sxm4-40gb");
  for (auto [ctas, algbw] :
       {std::pair{1, 11.2}, {2, 22.4}, {4, 42.6}, {8, 77.7}, {16, 128.9}, {32, 144.7}}) {
    const double busbw = g.collective_busbw(ctas, MHz(1410)) / 1e9;
    EXPECT_NEAR(busbw / 1.5, algbw, 0.09 * algbw) << ctas << " CTAs";
  }
}

TEST(GpuCatalogue, CollectiveBandwidthRisesWithCtasAndClockAndSaturates) {
  for (const auto& name : list_gpus()) {
    SCOPED_TRACE(name);
    const GpuSpec g = load_gpu(name);
    const double ceiling = g.collective_busbw_ceiling_gbps * 1e9;
    double last_ctas = 0;
    for (int c = 1; c <= 64; c *= 2) {
      const double bw = g.collective_busbw(c, g.clock_max);
      EXPECT_GT(bw, last_ctas);
      EXPECT_LT(bw, ceiling);
      last_ctas = bw;
      EXPECT_GT(bw, g.collective_busbw(c, g.clock_max * 0.7));
    }
    // Saturated: doubling the CTAs beyond 64 gains under 2 %.
    EXPECT_LT(g.collective_busbw(128, g.clock_max) / g.collective_busbw(64, g.clock_max), 1.02);
    EXPECT_GT(g.collective_busbw(128, g.clock_max), 0.95 * ceiling);
  }
}

TEST(GpuCatalogue, NumberWithoutSourceIsRejected) {
  auto doc = JsonDocument::load_file(data_dir() / "gpus" / "a100-sxm4-40gb.json").raw();
  doc["sm_count"]["source"] = "";
  const auto path = std::filesystem::temp_directory_path() / "kareus_gpu_no_source.json";
  std::ofstream(path) << doc.dump();
  try {
    load_gpu(path.string());
    FAIL() << "accepted a figure without a source";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/sm_count/source"), std::string::npos) << e.what();
  }
  doc["sm_count"] = 108;  // a bare number
  std::ofstream(path) << doc.dump();
  EXPECT_THROW(load_gpu(path.string()), Error);
}

TEST(GpuCatalogue, AFileWithoutMemoryCapacityIsNamedWithTheField) {
  auto doc = JsonDocument::load_file(data_dir() / "gpus" / "a100-sxm4-40gb.json").raw();
  doc.erase("memory_capacity_gib");
  const auto path = std::filesystem::temp_directory_path() / "kareus_gpu_no_memory.json";
  std::ofstream(path) << doc.dump();
  const std::string message = testing::error_of([&] { load_gpu(path.string()); });
  EXPECT_THAT(message, ::testing::HasSubstr(path.string()));
  EXPECT_THAT(message, ::testing::HasSubstr("memory_capacity_gib"));
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(GpuCatalogue, EveryGpuHasItsDatasheetMemory) {
  for (const auto& name : list_gpus()) EXPECT_GT(load_gpu(name).memory_capacity_gib, 0) << name;
  EXPECT_EQ(load_gpu("a100-sxm4-40gb").memory_capacity_gib, 40);
  EXPECT_EQ(load_gpu("h100-sxm").memory_capacity_gib, 80);
}

TEST(GpuCatalogue, UnknownGpuListsTheKnownOnes) {
  try {
    load_gpu("v100");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("a100-sxm4-40gb"), std::string::npos);
  }
}

}  // namespace
}  // namespace kareus
