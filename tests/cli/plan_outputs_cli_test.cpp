// SPDX-License-Identifier: Apache-2.0
// `kareus plan --out` and `--export-artifact` as sets: a rerun leaves one run's files
// (schedule.json and summary.json never from two runs), keeps files that are not the plan's, and a
// refused output path costs no planning.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "common/run_cli.hpp"
#include "common/scratch_dir.hpp"
#include "kareus/core/json.hpp"
#include "kareus/schedule/schedule.hpp"

namespace kareus {
namespace {

namespace fs = std::filesystem;

const testing::ScratchDir kScratch("kareus_plan_outputs_cli");
const fs::path& kTmp = kScratch.path();

testing::CliRun plan(const std::string& extra) {
  return testing::run_cli(KAREUS_BINARY,
                          "plan --model llama3.2-3b --tp 8 --pp 2 --mbs 8 --seq 4096 "
                          "--microbatches 4 --quiet --db " +
                              (kTmp / "store.sqlite").string() + " " + extra);
}

std::set<std::string> names(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

TEST(PlanOutputs, ARerunLeavesOneRunsFilesAndKeepsTheUsers) {
  const fs::path out = kTmp / "rerun";
  fs::remove_all(out);
  ASSERT_EQ(plan("--methods megatron,perseus --out " + out.string()).exit_code, 0);
  std::ofstream(out / "notes.txt") << "mine";
  const auto r = plan("--methods megatron --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(names(out), (std::set<std::string>{"frontier_megatron.csv", "schedule.json",
                                               "summary.json", "partitions.json", "notes.txt"}));
  const auto summary = JsonDocument::load_file((out / "summary.json").string());
  EXPECT_EQ(summary.root().at("methods").keys(), std::vector<std::string>{"megatron"});
  EXPECT_EQ(load_schedule(out / "schedule.json").method, "megatron");
  for (const auto& name : names(kTmp))
    EXPECT_FALSE(name.starts_with(".")) << "staging folder left behind: " << name;
}

TEST(PlanOutputs, AnArtifactUnderAFileLeavesOutAsItWas) {
  const fs::path out = kTmp / "kept";
  fs::remove_all(out);
  fs::create_directories(out);
  std::ofstream(out / "schedule.json") << "previous";
  std::ofstream(kTmp / "file") << "x";
  const auto r =
      plan("--out " + out.string() + " --export-artifact " + (kTmp / "file" / "a").string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--export-artifact"), std::string::npos) << r.err;
  EXPECT_EQ(names(out), std::set<std::string>{"schedule.json"});
}

}  // namespace
}  // namespace kareus
