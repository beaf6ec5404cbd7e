// SPDX-License-Identifier: Apache-2.0
// The plan directory: a plan run's files as written are the files read back, from a folder or held
// in memory, and a reader names what is missing.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "common/scratch_dir.hpp"
#include "common/workloads.hpp"
#include "kareus/core/error.hpp"
#include "kareus/plan_dir/plan_write.hpp"

namespace kareus::plan_dir {
namespace {

planner::PlanOutcome small_plan() {
  planner::PlanRequest request;
  request.methods = {planner::Method::kMegatron, planner::Method::kPerseus};
  return planner::run(request, kareus::testing::llama3b(8, 1));
}

TEST(PlanFiles, WhatIsWrittenIsReadBack) {
  const kareus::testing::ScratchDir scratch("kareus_plan_files");
  const auto outcome = small_plan();
  const PlanFiles written = plan_files(outcome, scratch.path());
  EXPECT_EQ(written.texts.size(), 5U);  // two frontiers, schedule, summary, partitions
  for (const auto& [name, text] : written.texts) EXPECT_TRUE(is_plan_file(name)) << name;
  EXPECT_EQ(written.text(kSummary), outcome.summary.dump(2) + "\n");
  EXPECT_TRUE(written.texts.contains(frontier_file("perseus")));
  write_plan_files(written, scratch.path());
  const PlanFiles read = read_plan_files(scratch.path());
  EXPECT_EQ(read.texts, written.texts);
  EXPECT_EQ(read.source(kSchedule), (scratch.path() / kSchedule).string());
}

TEST(PlanFiles, AMissingFileOrFolderIsNamed) {
  const kareus::testing::ScratchDir scratch("kareus_plan_files_missing");
  const PlanFiles none = read_plan_files(scratch.path());
  EXPECT_TRUE(none.texts.empty());
  try {
    none.text(kSummary);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              (scratch.path() / kSummary).string() + ": not found; plan_dir holds it");
    // The command line says how a plan directory is made.
    EXPECT_EQ(e.message([](std::string_view) { return "the --out DIR of kareus plan"; }),
              (scratch.path() / kSummary).string() +
                  ": not found; the --out DIR of kareus plan holds it");
  }
  EXPECT_THROW(read_plan_files(scratch.path() / "nowhere"), Error);
  EXPECT_FALSE(is_plan_file("report.html"));
  EXPECT_FALSE(is_plan_file("frontier_kareus.json"));
}

}  // namespace
}  // namespace kareus::plan_dir
