// SPDX-License-Identifier: Apache-2.0
// kareus compare and kareus simulate --breakdown end to end: two plans' ledgers side by side, the
// difference term by term, the parts adding up; bad references and folders refused with one line.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>

#include "common/run_cli.hpp"
#include "common/scratch_dir.hpp"
#include "kareus/core/json.hpp"
#include "kareus/core/wrap.hpp"

namespace kareus {
namespace {

namespace fs = std::filesystem;

const testing::ScratchDir kScratch("kareus_compare_cli");
const fs::path& kTmp = kScratch.path();

testing::CliRun kareus(const std::string& args) {
  return testing::run_cli(KAREUS_BINARY, args);
}

// Two plans of the paper's first configuration with half the microbatches, and one of another
// workload.
const fs::path& plan_dir(int microbatches) {
  static std::map<int, fs::path> dirs;
  auto it = dirs.find(microbatches);
  if (it != dirs.end()) return it->second;
  const fs::path dir = kTmp / ("plan" + std::to_string(microbatches));
  const auto r =
      kareus("plan --model llama3.2-3b --tp 8 --pp 2 --mbs 8 --seq 4096 --microbatches " +
             std::to_string(microbatches) + " --quiet --no-db --out " + dir.string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return dirs[microbatches] = dir;
}

void expect_one_line_exit_2(const testing::CliRun& r, const std::string& names) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(names), std::string::npos) << r.err;
}

TEST(CompareCli, ExplainsTwoPlansTermByTermAndThePartsAddUp) {
  const auto r = kareus("compare --plan " + plan_dir(4).string() + " kareus perseus --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json doc = Json::parse(r.out);
  EXPECT_NE(doc.at("explanation").get<std::string>().find("kareus fastest"), std::string::npos);
  for (const char* side : {"a", "b"}) {
    double parts = 0;
    for (const auto& t : doc.at("energy_j")) parts += t.at(side).get<double>();
    // The ledger replays the plan; it matches the planned energy up to composition.
    EXPECT_NEAR(parts, doc.at(side).at("energy_j").get<double>(),
                2e-3 * doc.at(side).at("energy_j").get<double>())
        << side;
  }
  for (const auto& t : doc.at("energy_j"))
    EXPECT_DOUBLE_EQ(t.at("difference").get<double>(),
                     t.at("a").get<double>() - t.at("b").get<double>());
  const auto text = kareus("compare --plan " + plan_dir(4).string() + " kareus:min-energy perseus");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("compute dynamic"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("pipeline waits"), std::string::npos) << text.out;
  // The explanation is long prose: it folds within the command line's width.
  std::istringstream lines(text.out);
  for (std::string line; std::getline(lines, line);)
    EXPECT_LE(display_width(line), kLineWidth) << line;
}

TEST(CompareCli, BadReferencesAndFoldersAreOneLineAndExitTwo) {
  const std::string dir = plan_dir(4).string();
  expect_one_line_exit_2(kareus("compare --plan " + dir + " frobnicate perseus"), "frobnicate");
  expect_one_line_exit_2(kareus("compare --plan " + dir + " kareus:999999999 perseus"),
                         "kareus:999999999");
  expect_one_line_exit_2(kareus("compare --plan " + dir + " kareus:fast perseus"), "kareus:fast");
  expect_one_line_exit_2(kareus("compare --plan " + (kTmp / "missing").string() + " kareus"),
                         "missing");
  expect_one_line_exit_2(
      kareus("compare --plan " + dir + " --plan-b " + plan_dir(8).string() + " kareus perseus"),
      plan_dir(8).string());
}

TEST(SimulateCli, BreakdownSaysWhereTheEnergyGoesAndItAddsUp) {
  const auto r = kareus(
      "simulate --model llama3.2-3b --tp 8 --pp 2 --mbs 8 --seq 4096 --microbatches 8 "
      "--execution nanobatch --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json doc = Json::parse(r.out);
  const Json& e = doc.at("ledger").at("energy_j");
  double parts = 0;
  for (const char* k :
       {"static", "idle", "compute_dynamic", "collective_dynamic", "pipeline_waits"})
    parts += e.at(k).get<double>();
  EXPECT_NEAR(parts, doc.at("energy_j").at("total").get<double>(),
              1e-9 * doc.at("energy_j").at("total").get<double>());
  const double gpus = doc.at("workload").at("gpus").get<double>();
  EXPECT_NEAR(doc.at("ledger").at("gpu_time_s").at("total").get<double>(),
              gpus * doc.at("iteration_time_s").get<double>(), 1e-9 * gpus * 10);
  const auto text = kareus(
      "simulate --model llama3.2-3b --tp 8 --pp 2 --mbs 8 --seq 4096 --microbatches 8 "
      "--breakdown");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("pipeline waits"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace kareus
