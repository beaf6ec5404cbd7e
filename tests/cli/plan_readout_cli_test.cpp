// SPDX-License-Identifier: Apache-2.0
// What a person reads from `kareus plan`: the table's width and units, the progress lines a log
// gets, and the profiling cost of a run whose measurements the store already had.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "common/run_cli.hpp"
#include "common/scratch_dir.hpp"
#include "kareus/core/json.hpp"

namespace kareus {
namespace {

namespace fs = std::filesystem;

const testing::ScratchDir kScratch("kareus_plan_readout_cli");
const fs::path& kTmp = kScratch.path();

testing::CliRun plan(const std::string& store, const std::string& extra) {
  fs::create_directories(kTmp);
  return testing::run_cli(KAREUS_BINARY,
                          "plan --model llama3.2-3b --tp 8 --pp 2 --mbs 8 --seq 4096 "
                          "--microbatches 4 --db " +
                              (kTmp / store).string() + " " + extra);
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(PlanOutput, TableFitsIn120ColumnsWithScaledEnergyUnits) {
  const auto r = plan("narrow.sqlite", "");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const auto& line : lines(r.out)) EXPECT_LE(line.size(), 120u) << line;
  // Job energies of this size are kilojoules, written so.
  EXPECT_NE(r.out.find(" kJ "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kJ per iteration"), std::string::npos) << r.out;
}

TEST(PlanOutput, WideShowsEveryColumnInJoules) {
  const auto r = plan("wide.sqlite", "--wide");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* column :
       {"points", "time vs megatron", "energy vs megatron", "of which reused", "measurements"})
    EXPECT_NE(r.out.find(column), std::string::npos) << column;
  EXPECT_EQ(r.out.find(" kJ"), std::string::npos) << r.out;
}

// Without --out nothing is written, so the selected plan's line is the result.
TEST(PlanOutput, QuietPrintsNoProgressAndOnlyTheSelectedLine) {
  const auto r = plan("quiet.sqlite", "--quiet --methods megatron");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("selected (megatron, max-throughput): ")) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_EQ(r.err, "");
}

// Off a terminal, one summary line per method: no counts that look cut short, no per-partition
// lines, nothing unexplained.
TEST(PlanOutput, LogGetsOneFinishedLinePerMethod) {
  const auto r = plan("log.sqlite", "");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto err = lines(r.err);
  ASSERT_EQ(err.size(), 4u) << r.err;
  const char* methods[] = {"megatron", "perseus", "nanobatch-perseus", "kareus"};
  for (std::size_t i = 0; i < err.size(); ++i) {
    EXPECT_EQ(err[i].rfind(std::string(methods[i]) + ": done in ", 0), 0u) << err[i];
    EXPECT_EQ(err[i].find('/'), std::string::npos) << err[i];
    EXPECT_EQ(err[i].find("HV"), std::string::npos) << err[i];
  }
  EXPECT_NE(err[3].find("partition measurements"), std::string::npos) << err[3];
}

// A second run answers every measurement from the store: the method costs what it cost, and
// the reused part is shown beside it instead of the cost dropping to zero.
TEST(PlanOutput, ReusedMeasurementsAreCountedInTheCostAndShownApart) {
  const auto first = plan("reuse.sqlite", "--methods kareus --json");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const auto second_text = plan("reuse.sqlite", "--methods kareus");
  ASSERT_EQ(second_text.exit_code, 0) << second_text.err;
  const auto second = plan("reuse.sqlite", "--methods kareus --json");
  ASSERT_EQ(second.exit_code, 0) << second.err;

  const auto a = JsonDocument::parse(first.out, "first");
  const auto b = JsonDocument::parse(second.out, "second");
  const auto ka = a.root().at("methods").at("kareus");
  const auto kb = b.root().at("methods").at("kareus");
  EXPECT_GT(ka.number("profiling_gpu_hours"), 0.0);
  EXPECT_EQ(ka.number("profiling_gpu_hours_reused"), 0.0);
  EXPECT_NEAR(kb.number("profiling_gpu_hours"), ka.number("profiling_gpu_hours"),
              1e-9 * ka.number("profiling_gpu_hours"));
  EXPECT_NEAR(kb.number("profiling_gpu_hours_reused"), kb.number("profiling_gpu_hours"),
              1e-9 * ka.number("profiling_gpu_hours"));
  EXPECT_NE(
      second_text.out.find("profiling GPU-h reused from the store (paid by earlier runs): kareus "),
      std::string::npos)
      << second_text.out;
  EXPECT_NE(second_text.err.find("(all reused from the store)"), std::string::npos)
      << second_text.err;
}

// --no-db, as on search: measured afresh, nothing stored, not even in the default store.
TEST(PlanOutput, NoDbStoresNothing) {
  const fs::path cache = kTmp / "no_db_cache";
  ::setenv("XDG_CACHE_HOME", cache.c_str(), 1);
  const auto r = testing::run_cli(KAREUS_BINARY,
                                  "plan --model llama3.2-3b --tp 8 --pp 2 --mbs 8 --seq 4096 "
                                  "--microbatches 4 --methods kareus --no-db --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = JsonDocument::parse(r.out, "stdout");
  EXPECT_EQ(doc.root().at("provenance").string("store"), "none: --no-db");
  EXPECT_EQ(doc.root().at("methods").at("kareus").number("measurements_reused"), 0.0);
  EXPECT_FALSE(fs::exists(cache));
  testing::expect_rejected(
      KAREUS_BINARY,
      {"plan --model llama3.2-3b --no-db --db " + (kTmp / "x.sqlite").string(), "excludes"});
  EXPECT_FALSE(fs::exists(kTmp / "x.sqlite"));
}

// Every frontier kareus prints or writes lists its fastest point first.
TEST(PlanOutput, FrontiersAreFastestFirst) {
  const auto r = plan("order.sqlite", "--methods perseus --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = JsonDocument::parse(r.out, "stdout");
  for (const char* list : {"frontier", "ten_point_frontier"}) {
    SCOPED_TRACE(list);
    const auto points = doc.root().at("methods").at("perseus").at(list);
    ASSERT_GT(points.size(), 1u);
    for (std::size_t i = 1; i < points.size(); ++i)
      EXPECT_LT(points.at(i - 1).number("time_s"), points.at(i).number("time_s"));
  }
}

}  // namespace
}  // namespace kareus
