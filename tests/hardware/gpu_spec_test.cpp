#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kareus/core/error.hpp"
#include "kareus/core/json.hpp"
#include "kareus/core/paths.hpp"
#include "kareus/hardware/gpu_spec.hpp"

namespace kareus {
namespace {

TEST(GpuCatalogue, HasTheIssueGpus) {
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

TEST(GpuCatalogue, A100MatchesPublishedFigures) {
  const GpuSpec g = load_gpu("a100-sxm4-40gb");
  EXPECT_EQ(g.sm_count, 108);
  EXPECT_EQ(g.clock_max, MHz(1410));
  EXPECT_EQ(g.static_power, Watts(85));
  EXPECT_EQ(g.power_limit_default, Watts(400));
  // Kareus searches 1410 down to 900 MHz in 30 MHz steps: 18 clocks.
  EXPECT_EQ(g.search_clocks().size(), 18u);
  EXPECT_EQ(g.supported_clocks().size(), 81u);
  EXPECT_NEAR(g.gemm_sm_scaling(20.0 / 108), 0.30, 1e-9);
  EXPECT_NEAR(g.gemm_sm_scaling(80.0 / 108), 0.97, 1e-9);
  EXPECT_DOUBLE_EQ(g.voltage(MHz(900)), g.voltage_floor_v);
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
