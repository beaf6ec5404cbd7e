// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "common/run_cli.hpp"
#include "kareus/core/json.hpp"

namespace kareus {
namespace {

const std::string kPlan =
    "plan --model llama3.2-3b --gpu a100-sxm4-40gb --tp 8 --pp 2 --mbs 8 --seq 4096 "
    "--microbatches 8 --recompute full --methods perseus,kareus --quiet";

testing::CliRun kareus(const std::string& args) {
  return testing::run_cli(KAREUS_BINARY, args);
}

TEST(ClockGranularityCli, BadValueIsRejectedBeforePlanning) {
  const auto r = kareus(kPlan + " --clock-granularity layer");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("--clock-granularity = layer: allowed: instruction, partition"),
            std::string::npos)
      << r.err;
}

TEST(ClockGranularityCli, NegativeSwitchLatencyIsRejected) {
  const auto r = kareus(kPlan + " --clock-granularity partition --switch-latency-ms -1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--switch-latency-ms = -1"), std::string::npos) << r.err;
}

TEST(ClockGranularityCli, PartitionGranularityPlansAndReportsIt) {
  const auto db = std::filesystem::temp_directory_path() / "kareus_granularity_cli.sqlite";
  const auto r = kareus(kPlan + " --clock-granularity partition --switch-latency-ms 1 --db " +
                        db.string() + " --json");
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db.string() + suffix);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = JsonDocument::parse(r.out, "stdout");
  const auto g = doc.root().at("clock_granularity");
  EXPECT_EQ(g.string("granularity"), "partition");
  EXPECT_DOUBLE_EQ(g.number("switch_latency_s"), 0.001);
  EXPECT_GT(doc.root().at("methods").at("kareus").integer("frontier_size"), 0);
}

}  // namespace
}  // namespace kareus
