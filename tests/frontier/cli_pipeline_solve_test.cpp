// SPDX-License-Identifier: Apache-2.0
// `kareus pipeline-solve` end to end: the built binary on the real Perseus A40 profile, and one bad
// input per validation rule (exit 2, one line naming the file, line and column).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "common/run_cli.hpp"
#include "kareus/core/error.hpp"
#include "kareus/core/json.hpp"

namespace kareus {
namespace {

const std::string kProfile = std::string(KAREUS_TEST_DATA_DIR) + "/frontier/gpt3-175b+a40_bf16.csv";

testing::CliRun run(const std::string& args) {
  return testing::run_cli(KAREUS_BINARY, "pipeline-solve " + args);
}

std::string write_profile(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << text;
  return path.string();
}

TEST(PipelineSolveCli, RealProfileFrontierRunsFromLeastEnergyToFastest) {
  const auto r =
      run("--stage-profile '" + kProfile + "' --microbatches 8 --p-blocking 70.38 --plan --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto document = JsonDocument::parse(r.out, "stdout");
  const auto doc = document.root();
  EXPECT_EQ(doc.integer("stages"), 8);
  const auto frontier = doc.at("frontier");
  ASSERT_GT(frontier.size(), 20u);
  std::set<double> clocks;
  for (int f = 1740; f >= 855; f -= 15) clocks.insert(f);
  for (std::size_t i = 0; i < frontier.size(); ++i) {
    const auto point = frontier.at(i);
    if (i > 0) {
      // Fastest first, as every frontier kareus prints.
      EXPECT_GT(point.number("time_s"), frontier.at(i - 1).number("time_s"));
      EXPECT_LT(point.number("energy_j"), frontier.at(i - 1).number("energy_j"));
    }
    const auto plan = point.at("plan");
    ASSERT_EQ(plan.size(), 8u);
    for (std::size_t s = 0; s < 8; ++s) {
      ASSERT_EQ(plan.at(s).size(), 16u);
      for (std::size_t k = 0; k < 16; ++k)
        EXPECT_TRUE(clocks.count(plan.at(s).at(k).number("frequency_mhz")));
    }
  }
  // Stage 0 runs 7 warm-up forwards before its first backward.
  EXPECT_EQ(frontier.at(0).at("plan").at(0).at(7).string("instruction"), "F7");
  EXPECT_EQ(frontier.at(0).at("plan").at(0).at(8).string("instruction"), "B0");
  // Every instruction at 1740 MHz is the fastest plan: 8 stages' bubbles plus 8 microbatches.
  EXPECT_LT(frontier.at(0).number("time_s"), frontier.at(frontier.size() - 1).number("time_s"));
}

TEST(PipelineSolveCli, TextOutputHasATable) {
  const auto r = run("--stage-profile '" + kProfile + "' --microbatches 4 --p-blocking 70.38");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("8 stages, 4 microbatches"), std::string::npos);
  EXPECT_NE(r.out.find("energy (J)"), std::string::npos);
}

void expect_rejected(const std::string& args, const std::vector<std::string>& fragments) {
  const auto r = run(args);
  EXPECT_EQ(r.exit_code, 2) << args;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  for (const auto& f : fragments) EXPECT_NE(r.err.find(f), std::string::npos) << r.err;
}

TEST(PipelineSolveCli, RejectsBadProfilesNamingFileLineAndColumn) {
  const std::string header = "stage,instruction,frequency,time,energy\n";
  const std::string good = "0,forward,1000,0.1,10\n0,backward,1000,0.2,20\n";
  const auto flags = [](const std::string& path) {
    return "--stage-profile " + path + " --microbatches 4 --p-blocking 70";
  };
  expect_rejected(
      flags(write_profile("k_missing.csv", "stage,instruction,frequency,time\n0,forward,1,1\n")),
      {"k_missing.csv", "missing required column 'energy'"});
  expect_rejected(flags(write_profile("k_text.csv", header + good + "1,forward,1000,fast,10\n")),
                  {"k_text.csv:4", "column 'time' = fast"});
  expect_rejected(flags(write_profile("k_zero.csv", header + good + "1,forward,1000,0.1,0\n")),
                  {"k_zero.csv:4", "column 'energy' = 0", "positive"});
  expect_rejected(flags(write_profile("k_name.csv", header + good + "1,recompute,1000,0.1,1\n")),
                  {"k_name.csv:4", "column 'instruction' = recompute", "forward or backward"});
  expect_rejected(
      flags(write_profile("k_gap.csv",
                          header + good + "2,forward,1000,0.1,1\n2,backward,1000,0.1,1\n")),
      {"k_gap.csv:4", "column 'stage' = 2", "contiguous from 0", "stage 1"});
  expect_rejected(flags(write_profile("k_half.csv", header + good + "1,Forward,1000,0.1,1\n")),
                  {"k_half.csv:4", "stage 1 has no backward rows"});
  expect_rejected(flags(write_profile("k_dup.csv", header + good + "0,FORWARD,1000,0.3,1\n")),
                  {"k_dup.csv:4", "column 'frequency' = 1000", "line 2"});
  const auto ok = write_profile("k_ok.csv", header + good);
  expect_rejected("--stage-profile " + ok + " --microbatches 0 --p-blocking 70",
                  {"--microbatches = 0", "at least 1"});
  expect_rejected("--stage-profile " + ok + " --microbatches 2 --p-blocking -1",
                  {"--p-blocking = -1", "from 0 to 10000 W"});
  expect_rejected("--stage-profile /nonexistent/p.csv --microbatches 2 --p-blocking 1",
                  {"/nonexistent/p.csv"});
  EXPECT_EQ(run("--stage-profile " + ok + " --microbatches 2 --p-blocking 1 --json").exit_code, 0);
  expect_rejected("--microbatches 2 --p-blocking 1", {"--stage-profile is required"});
}

TEST(PipelineSolveCli, OldProfileFlagStillWorksAndSaysItsNewName) {
  const auto renamed = run("--profile '" + kProfile + "' --microbatches 4 --p-blocking 70.38");
  const auto current =
      run("--stage-profile '" + kProfile + "' --microbatches 4 --p-blocking 70.38");
  ASSERT_EQ(renamed.exit_code, 0) << renamed.err;
  EXPECT_EQ(renamed.out, current.out);
  EXPECT_NE(renamed.err.find("--profile is deprecated"), std::string::npos) << renamed.err;
  EXPECT_NE(renamed.err.find("use --stage-profile"), std::string::npos) << renamed.err;
  EXPECT_EQ(current.err.find("deprecated"), std::string::npos) << current.err;
}

// Each min-cut step shortens the iteration by one time unit, so the step count is bounded up front
// (kMaxPipelineSolverSteps) instead of running for hours on an absurd unit or profile.
TEST(PipelineSolveCli, RefusesMoreStepsThanTheBoundInsteadOfRunning) {
  const std::string header = "stage,instruction,frequency,time,energy\n";
  // An option of 2,000 s is 2e6 units of 1 ms; one beyond an hour is refused as it is read.
  const auto long_option = write_profile(
      "k_long.csv", header + "0,forward,1000,2000,10\n" + "0,backward,1000,0.2,20\n");
  expect_rejected("--stage-profile " + long_option + " --microbatches 1 --p-blocking 70",
                  {"k_long.csv", "time = 2000 s", "at most 1000000 time units"});
  const auto huge = write_profile(
      "k_huge.csv", header + "0,forward,1000,1e308,10\n" + "0,backward,1000,0.2,20\n");
  expect_rejected("--stage-profile " + huge + " --microbatches 1 --p-blocking 70",
                  {"k_huge.csv:2", "column 'time' = 1e308", "at most 3600 seconds"});
  expect_rejected(
      "--stage-profile '" + kProfile + "' --microbatches 8 --p-blocking 70 --unit-time-ms 1e-9",
      {"gpt3-175b+a40_bf16.csv", "at most 1000000 time units"});
  // 10,000 microbatches: about 4e6 units of 1 ms. Every option fits the bound, so the unit is at
  // fault: the message names its flag and the smallest unit that works.
  expect_rejected(
      "--stage-profile '" + kProfile + "' --microbatches 10000 --p-blocking 70",
      {"command line: --unit-time-ms = 1:", "at most 1000000", "this job needs at least 7.7"});
  // 100,000 microbatches: more instructions than the solver takes at any unit, refused before
  // the problem is built.
  expect_rejected("--stage-profile '" + kProfile + "' --microbatches 100000 --p-blocking 70",
                  {"command line: --microbatches = 100000", "1600000 instructions per iteration",
                   "at most 250000"});
}

// Every path from the first forward to the last backward crosses the 7 stage boundaries down and
// back up, so 5 ms transfers lengthen the fastest iteration by at least 14 x 5 ms; none is the
// default (Perseus's convention).
TEST(PipelineSolveCli, TransfersLengthenEveryPathBetweenStages) {
  const auto fastest = [](const std::string& extra) {
    const auto r = run("--stage-profile '" + kProfile +
                       "' --microbatches 4 --p-blocking 70.38 --json " + extra);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto document = JsonDocument::parse(r.out, "stdout");
    const auto frontier = document.root().at("frontier");
    return frontier.at(0).number("time_s");
  };
  const double without = fastest("");
  EXPECT_DOUBLE_EQ(fastest("--transfer-ms 0"), without);
  EXPECT_GE(fastest("--transfer-ms 5"), without + 14 * 0.005 - 1e-9);
  expect_rejected(
      "--stage-profile '" + kProfile + "' --microbatches 4 --p-blocking 70 --transfer-ms -1",
      {"--transfer-ms = -1", ">= 0"});
}

// --deadline / --energy-budget select a plan polished at the bound (frontier_polish.hpp), as
// `kareus plan` does: never worse than the frontier's own choice, and cheaper at some deadlines (so
// a selection that skipped the polish fails here). The selected point is one of the printed ones.
// The selection tests' case: GPT-3 x 12 on the A40 profile.
const std::string kSelectionCase =
    "--stage-profile '" + kProfile + "' --microbatches 12 --p-blocking 70.38";

// The --json document of kSelectionCase with `extra` flags, which must succeed.
JsonDocument solve_selection(const std::string& extra) {
  const auto r = run(kSelectionCase + " --json " + extra);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return JsonDocument::parse(r.out, "stdout");
}

TEST(PipelineSolveCli, SelectionPolishesThePlanItPicks) {
  const std::string& base = kSelectionCase;
  const auto& solve = solve_selection;
  const auto plain = solve("");
  const auto frontier = plain.root().at("frontier");
  const double fastest = frontier.at(0).number("time_s");
  const double slowest = frontier.at(frontier.size() - 1).number("time_s");
  const auto expect_printed = [](const JsonValue& doc) {
    const auto selected = doc.at("selected");
    const auto point = doc.at("frontier").at(static_cast<std::size_t>(selected.integer("point")));
    EXPECT_EQ(selected.number("time_s"), point.number("time_s"));
    EXPECT_EQ(selected.number("energy_j"), point.number("energy_j"));
    EXPECT_EQ(selected.at("plan").size(), 8u);
    EXPECT_GT(selected.number("polish_time_s"), 0.0);
  };
  int cheaper = 0;
  for (double fraction : {0.01, 0.03, 0.1, 0.3}) {
    const double deadline = fastest + fraction * (slowest - fastest);
    double before = 0;
    for (std::size_t i = 0; i < frontier.size(); ++i)
      if (frontier.at(i).number("time_s") <= deadline) before = frontier.at(i).number("energy_j");
    const auto doc = solve("--deadline " + format_number(deadline));
    const auto selected = doc.root().at("selected");
    EXPECT_EQ(selected.number("deadline_s"), deadline);
    EXPECT_LE(selected.number("time_s"), deadline);
    EXPECT_LE(selected.number("energy_j"), before);
    cheaper += selected.number("energy_j") < before;
    expect_printed(doc.root());

    const double budget = before;
    double time_before = 0;
    for (std::size_t i = frontier.size(); i-- > 0;)
      if (frontier.at(i).number("energy_j") <= budget)
        time_before = frontier.at(i).number("time_s");
    const auto by_budget = solve("--energy-budget " + format_number(budget));
    const auto within = by_budget.root().at("selected");
    EXPECT_LE(within.number("energy_j"), budget);
    EXPECT_LE(within.number("time_s"), time_before);
    expect_printed(by_budget.root());
  }
  EXPECT_GT(cheaper, 0);
  const auto text = run(base + " --deadline " + format_number(slowest));
  EXPECT_NE(text.out.find("selected (deadline"), std::string::npos) << text.out;

  expect_rejected(base + " --deadline -1", {"command line: --deadline = -1", "positive"});
  expect_rejected(base + " --deadline 1",
                  {"command line: --deadline = 1:", "the fastest iteration time, 7.546"});
  expect_rejected(base + " --energy-budget 0", {"--energy-budget = 0", "positive"});
  expect_rejected(base + " --energy-budget 10",
                  {"command line: --energy-budget = 10:", "the least iteration energy, 9905"});
  const auto both = run(base + " --deadline 8 --energy-budget 11000");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_TRUE(both.out.empty());
}

// --milp-nodes refines a --deadline selection by CBC from it (deadline_refine.hpp): at GPT-3 x 12,
// 10 % of the way from the fastest time, 5 nodes find a cheaper plan within the deadline (so a
// flag that skipped the refinement fails here), and a second run prints the same document but for
// the timings. The refinement's progress goes to stderr: the whole MILP's line and each sweep's,
// the last one the sweeps the document counts; --quiet prints none of them (the solver's summary
// line stays) and the same document. Bad
// input: a negative count, or a count without a deadline.
TEST(PipelineSolveCli, MilpNodesRefineTheDeadlineSelection) {
  const auto& solve = solve_selection;
  const auto plain = solve("");
  const auto frontier = plain.root().at("frontier");
  const double fastest = frontier.at(0).number("time_s");
  const double slowest = frontier.at(frontier.size() - 1).number("time_s");
  const std::string deadline = "--deadline " + format_number(fastest + 0.1 * (slowest - fastest));
  const auto polished = solve(deadline);
  const auto loud = run(kSelectionCase + " --json " + deadline + " --milp-nodes 5");
  ASSERT_EQ(loud.exit_code, 0) << loud.err;
  const auto refined = JsonDocument::parse(loud.out, "stdout");
  const auto before = polished.root().at("selected");
  const auto after = refined.root().at("selected");
  EXPECT_LE(after.number("time_s"), after.number("deadline_s"));
  EXPECT_LT(after.number("energy_j"), before.number("energy_j"));
  EXPECT_EQ(after.integer("point"), before.integer("point"));
  const auto refinement = after.at("milp_refinement");
  EXPECT_EQ(refinement.integer("max_nodes"), 5);
  EXPECT_TRUE(refinement.at("improved").as_bool());
  EXPECT_FALSE(refinement.at("time_capped").as_bool());
  EXPECT_GT(refinement.number("time_s"), 0.0);
  EXPECT_FALSE(before.contains("milp_refinement"));

  const int sweeps = static_cast<int>(refinement.integer("sweeps"));
  EXPECT_GE(sweeps, 1);
  EXPECT_NE(loud.err.find("MILP refinement: whole problem, 1 CBC solve,"), std::string::npos)
      << loud.err;
  EXPECT_NE(loud.err.find(fmt::format("MILP refinement: sweep {} done, {} CBC solves", sweeps,
                                      refinement.integer("solves"))),
            std::string::npos)
      << loud.err;

  const auto quiet = run(kSelectionCase + " --json " + deadline + " --milp-nodes 5 --quiet");
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find("MILP refinement"), std::string::npos) << quiet.err;
  const auto again = JsonDocument::parse(quiet.out, "stdout");
  EXPECT_EQ(again.root().at("selected").number("energy_j"), after.number("energy_j"));
  EXPECT_EQ(again.root().at("selected").at("plan").raw(), after.at("plan").raw());

  expect_rejected(kSelectionCase + " " + deadline + " --milp-nodes -1",
                  {"command line: --milp-nodes = -1", ">= 0"});
  expect_rejected(kSelectionCase + " --milp-nodes 5",
                  {"command line: --milp-nodes = 5", "--deadline"});
}

}  // namespace
}  // namespace kareus
