// SPDX-License-Identifier: Apache-2.0
// What a newcomer types first: the shortest commands run, mistakes are answered in one line of
// our own words with the nearest valid name, every flag is checked before any work, and the exit
// code says whether the command or the machine needs fixing.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "common/run_cli.hpp"
#include "kareus/core/json.hpp"

namespace kareus {
namespace {

testing::CliRun kareus(const std::string& args) {
  return testing::run_cli(KAREUS_BINARY, args);
}

void expect_rejected(const std::string& args, const std::string& message) {
  testing::expect_rejected(KAREUS_BINARY, {args, message});
}

TEST(ParserMessages, UnknownFlagNamesTheNearestOne) {
  expect_rejected("plan --model llama3.2-3b --microbatchs 8",
                  "kareus plan: unknown flag --microbatchs; did you mean --microbatches?");
  expect_rejected("simulate --model llama3.2-3b --tpp 8",
                  "kareus simulate: unknown flag --tpp; did you mean --tp?");
  expect_rejected("plan --model llama3.2-3b --microbatchs=8", "unknown flag --microbatchs;");
}

TEST(ParserMessages, FarFromEveryFlagPointsAtHelp) {
  expect_rejected("plan --model llama3.2-3b --zzzzzzzz 1",
                  "kareus plan: unknown flag --zzzzzzzz; `kareus plan --help` lists them");
}

TEST(ParserMessages, UnknownCommandNamesTheNearestOne) {
  expect_rejected("plna --model llama3.2-3b", "kareus: unknown command plna; did you mean plan?");
  expect_rejected("energylens fti", "kareus energylens: unknown command fti; did you mean fit?");
}

TEST(ParserMessages, NoCommandSaysSo) {
  expect_rejected("", "kareus: no command given; `kareus --help` lists them");
}

TEST(ParserMessages, StrayValueIsNamed) {
  expect_rejected("simulate --model llama3.2-3b 8",
                  "kareus simulate: unexpected argument 8: every value follows its flag");
}

TEST(ParserMessages, RepeatedFlagIsNamed) {
  expect_rejected("simulate --model llama3.2-3b --tp 8 --tp 4",
                  "kareus simulate: --tp given 2 times; give it once");
}

TEST(ParserMessages, ExclusiveFlagsAreNamedTogether) {
  expect_rejected("plan --model llama3.2-3b --deadline 5 --energy-budget 9",
                  "excludes --energy-budget; give one of them");
}

TEST(ParserMessages, MissingConfigFileIsFileNotFound) {
  const auto r = kareus("simulate --model /missing/config.json --tp 8");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("model = /missing/config.json: file not found"), std::string::npos) << r.err;
  EXPECT_LT(r.err.size(), 200u) << "no catalogue listing: " << r.err;
}

TEST(ParserMessages, MisspeltModelNamesTheNearestOne) {
  expect_rejected("simulate --model llama3.2-3bb --tp 8",
                  "model = llama3.2-3bb: unknown model; did you mean llama3.2-3b?");
}

TEST(ModelNames, EverySpellingIsOneModel) {
  const std::string layout = " --tp 8 --pp 2 --mbs 8 --microbatches 8 --json";
  const auto canonical = kareus("simulate --model llama3.2-3b" + layout);
  ASSERT_EQ(canonical.exit_code, 0) << canonical.err;
  for (const std::string spelling : {"Llama-3.2-3B", "llama-3.2-3b", "LLAMA3.2_3B"}) {
    SCOPED_TRACE(spelling);
    const auto r = kareus("simulate --model " + spelling + layout);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, canonical.out);
  }
}

TEST(ModelNames, CatalogueListsOneStyleForOneFamily) {
  const auto r = kareus("models --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto models = JsonDocument::parse(r.out, "models").root();
  for (std::size_t i = 0; i < models.size(); ++i) {
    const std::string name = models.at(i).string("name");
    EXPECT_FALSE(name.starts_with("llama-")) << name << ": llama names are spelt llama3.x-...";
  }
}

TEST(Defaults, ShortestPlanRunsWithoutTheNanobatchMethods) {
  const auto r = kareus("plan --model llama3.2-3b --tp 8 --pp 2 --no-db");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("note: microbatch size 1 does not split into two nanobatches; planning "
                       "megatron and perseus only"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("selected (perseus, max-throughput)"), std::string::npos) << r.out;
}

TEST(Defaults, AskedForNanobatchMethodsAnOddMicrobatchIsStillAnError) {
  expect_rejected("plan --model llama3.2-3b --tp 8 --pp 2 --no-db --methods kareus",
                  "microbatch_size = 1: must be even");
}

TEST(Defaults, ShortestSimulateRunsOnTheSmallestLayoutThatFits) {
  const auto r = kareus("simulate --model llama3.2-3b --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("note: llama3.2-3b does not fit on one a100-sxm4-40gb; using the "
                       "smallest layout that does, --tp 2 --pp 1"),
            std::string::npos)
      << r.err;
  const auto doc = JsonDocument::parse(r.out, "simulate");
  EXPECT_EQ(doc.root().at("workload").at("parallelism").integer("tp"), 2);
}

TEST(Defaults, AnExplicitLayoutThatDoesNotFitNamesTheSmallestThatDoes) {
  expect_rejected("simulate --model llama3.2-3b --tp 1",
                  "the smallest layout that fits is tp 2 x pp 1");
}

// Checked before the workload is resolved, the store opened or anything planned.
TEST(FlagsFirst, BadSelectionIsNamedBeforeAnyWork) {
  expect_rejected("plan --model llama3.2-3b --tp 8 --pp 2 --deadline -1", "--deadline");
  expect_rejected("plan --model llama3.2-3b --tp 8 --pp 2 --energy-budget 0", "--energy-budget");
}

TEST(FlagsFirst, UnwritableOutputIsRefusedBeforePlanning) {
  const auto start = std::chrono::steady_clock::now();
  expect_rejected(
      "plan --model llama3.2-3b --tp 8 --pp 2 --mbs 8 --microbatches 8 --no-db "
      "--out /proc/kareus-plan",
      "--out = /proc/kareus-plan: cannot write in /proc");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5))
      << "refused after planning";
}

TEST(QuietPlan, WithoutOutPrintsTheSelectedLine) {
  const auto r = kareus("plan --model llama3.2-3b --tp 8 --pp 2 --no-db --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("selected (perseus, max-throughput): ")) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

TEST(ExitCodes, TheCommandIsTwoTheMachineIsFour) {
  EXPECT_EQ(kareus("simulate --model llama3.2-3b --tp 5").exit_code, 2);
  EXPECT_EQ(kareus("plan --model llama3.2-3b --tp 8 --pp 2 --mbs 2 --methods kareus --quiet "
                   "--db /proc/kareus/store.sqlite")
                .exit_code,
            4)
      << "a store that cannot be opened is the machine's";
}

}  // namespace
}  // namespace kareus
