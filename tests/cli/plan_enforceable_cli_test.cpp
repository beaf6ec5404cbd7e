// SPDX-License-Identifier: Apache-2.0
// kareus plan --enforceable clocks: the exported schedule is the best one a clocks-only runtime
// applies whole (no nanobatch execution, SM counts or launch slots).
#include <gtest/gtest.h>

#include <filesystem>

#include "common/run_cli.hpp"
#include "common/scratch_dir.hpp"
#include "kareus/core/json.hpp"
#include "kareus/schedule/schedule.hpp"

namespace kareus {
namespace {

namespace fs = std::filesystem;

const testing::ScratchDir kScratch("kareus_plan_enforceable");
const fs::path& kTmp = kScratch.path();

testing::CliRun plan(const std::string& extra) {
  fs::create_directories(kTmp);
  return testing::run_cli(KAREUS_BINARY,
                          "plan --model qwen3-1.7b --tp 2 --pp 2 --mbs 2 --microbatches 4 "
                          "--quiet --seed 3 " +
                              extra);
}

TEST(PlanEnforceable, ClocksSelectsTheBestClockOnlyPlan) {
  const auto r = plan("--methods megatron,perseus,kareus --enforceable clocks --json --out " +
                      (kTmp / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = JsonDocument::parse(r.out, "stdout");
  const auto root = doc.root();
  const std::string method = root.at("selected").string("method");
  EXPECT_TRUE(method == "megatron" || method == "perseus") << method;
  double best = 1e300;
  for (const char* m : {"megatron", "perseus"})
    best = std::min(best, root.at("methods").at(m).at("max_throughput").number("time_s"));
  EXPECT_EQ(root.at("selected").at("point").number("time_s"), best);
  const auto schedule = load_schedule(kTmp / "out" / "schedule.json");
  EXPECT_EQ(schedule.method, method);
  for (const auto& stage : schedule.stages)
    for (const auto& in : stage.instructions) EXPECT_EQ(in.execution, "sequential");
}

TEST(PlanEnforceable, RefusesWhenNoPlannedMethodRunsOnClocksAlone) {
  const auto r = plan("--methods kareus --enforceable clocks");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--enforceable"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("megatron and perseus"), std::string::npos) << r.err;
  const auto bad = plan("--methods perseus --enforceable sometimes");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("sometimes"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace kareus
