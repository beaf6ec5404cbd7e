// SPDX-License-Identifier: Apache-2.0
// scripts/gpu-check.sh --dry-run: what the real-GPU check would run, without a GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/run_cli.hpp"

namespace kareus {
namespace {

std::string script(const std::string& args) {
  return std::string("bash ") + KAREUS_SOURCE_DIR +
         "/scripts/gpu-check.sh --no-build --build-dir " + KAREUS_TEST_BINARY_DIR + " " + args;
}

TEST(GpuCheckScript, DryRunListsEveryConfigurationWithEmulatedFigures) {
  const auto run = testing::run_cli(script("--dry-run --json --sms 4,8"), "");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto doc = nlohmann::json::parse(run.out);
  EXPECT_TRUE(doc.at("dry_run").get<bool>());
  EXPECT_FALSE(doc.at("clock_controlled").get<bool>());
  EXPECT_FALSE(doc.contains("same_ranking"));
  const auto& rows = doc.at("configurations");
  // The script's default workload is TP2 without CP: fwd_attn, fwd_mlp, bwd_mlp, bwd_attn, with
  // two launch slots each, times the two SM counts given.
  ASSERT_EQ(rows.size(), 4u * 2 * 2);
  std::set<std::string> keys;
  for (const auto& r : rows) {
    keys.insert(r.at("partition").get<std::string>());
    EXPECT_GT(r.at("emulated_time_s").get<double>(), 0);
    EXPECT_GT(r.at("emulated_energy_j").get<double>(), 0);
    EXPECT_EQ(r.at("clock_mhz").get<double>(), doc.at("clock_mhz").get<double>());
    EXPECT_FALSE(r.contains("measured_time_s"));
  }
  EXPECT_EQ(keys, (std::set<std::string>{"fwd_attn", "fwd_mlp", "bwd_mlp", "bwd_attn"}));
  EXPECT_GT(doc.at("emulated_gpu_time_s").get<double>(), 0);
}

TEST(GpuCheckScript, RejectsOptionsThatWouldTouchClocks) {
  const auto run = testing::run_cli(script("--dry-run --allow-clock-control"), "");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, ::testing::HasSubstr("allow-clock-control"));
  EXPECT_TRUE(run.out.empty());
}

TEST(GpuCheckScript, BadInputFailsWithOneLineAndNoOutput) {
  const auto run = testing::run_cli(script("--dry-run --sms 0"), "");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, ::testing::HasSubstr("comm_sms"));
  EXPECT_TRUE(run.out.empty());
}

}  // namespace
}  // namespace kareus
