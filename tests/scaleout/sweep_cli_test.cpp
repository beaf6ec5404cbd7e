// SPDX-License-Identifier: Apache-2.0
// `kareus plan` over several workloads in one process: one folder of outputs per workload, the
// same as separate runs; what a sweep cannot mean is refused before anything is written.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/run_cli.hpp"
#include "common/scratch_dir.hpp"
#include "kareus/core/json.hpp"

namespace kareus {
namespace {

namespace fs = std::filesystem;

const testing::ScratchDir kScratch("kareus_sweep_test");
const fs::path& kTmp = kScratch.path();

void write_workload(const fs::path& path, const std::string& model, int microbatches = 4) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << Json{
      {"model", model},
      {"gpu", "a100-sxm4-40gb"},
      {"parallelism",
       {{"tp", 8},
        {"pp", 2},
        {"microbatch_size", 8},
        {"sequence_length", 4096},
        {"microbatches", microbatches},
        {"recompute",
         "full"}}}}.dump(2);
}

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string args(const std::string& workloads, const std::string& extra) {
  return "plan --quiet --seed 3 --methods megatron,kareus --db " + (kTmp / "s.sqlite").string() +
         " " + workloads + " " + extra;
}

TEST(PlanSweep, EachWorkloadGetsTheFilesASeparateRunWrites) {
  const fs::path a = kTmp / "in" / "a.json";
  const fs::path b = kTmp / "in" / "b.json";
  write_workload(a, "llama3.2-3b");
  write_workload(b, "qwen3-1.7b");
  const auto sweep =
      testing::run_cli(KAREUS_BINARY, args("--workload " + a.string() + " --workload " + b.string(),
                                           "--out " + (kTmp / "out").string()));
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  // --quiet prints no table, only where each workload's files went.
  EXPECT_EQ(sweep.out.find("on 16"), std::string::npos) << sweep.out;
  for (const char* name : {"a", "b"})
    EXPECT_NE(sweep.out.find("to " + (kTmp / "out" / name).string() + "\n"), std::string::npos)
        << sweep.out;
  for (const fs::path& w : {a, b}) {
    const std::string name = w.stem().string();
    SCOPED_TRACE(name);
    const auto one = testing::run_cli(
        KAREUS_BINARY, args("--workload " + w.string(), "--out " + (kTmp / "ref" / name).string()));
    ASSERT_EQ(one.exit_code, 0) << one.err;
    for (const char* file : {"schedule.json", "frontier_kareus.csv", "frontier_megatron.csv"})
      EXPECT_EQ(read(kTmp / "out" / name / file), read(kTmp / "ref" / name / file)) << file;
  }
}

// Progress in a sweep says which workload each line is about.
TEST(PlanSweep, ProgressLinesNameTheirWorkload) {
  const fs::path a = kTmp / "named" / "a.json";
  const fs::path b = kTmp / "named" / "b.json";
  write_workload(a, "llama3.2-3b");
  write_workload(b, "qwen3-1.7b");
  const auto sweep = testing::run_cli(
      KAREUS_BINARY, "plan --seed 3 --methods megatron,perseus --no-db --workload " + a.string() +
                         " --workload " + b.string() + " --out " + (kTmp / "named_out").string());
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  std::istringstream err(sweep.err);
  std::vector<std::string> lines;
  for (std::string l; std::getline(err, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 4u) << sweep.err;
  EXPECT_EQ(lines[0].rfind("a: megatron: done in ", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1].rfind("a: perseus: done in ", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind("b: megatron: done in ", 0), 0u) << lines[2];
  EXPECT_EQ(lines[3].rfind("b: perseus: done in ", 0), 0u) << lines[3];
}

TEST(PlanSweep, RefusesWhatOnlyOneWorkloadCanMean) {
  write_workload(kTmp / "in" / "a.json", "llama3.2-3b");
  write_workload(kTmp / "in" / "b.json", "qwen3-1.7b");
  const std::string folder = "--workload " + (kTmp / "in").string();
  for (const testing::BadInput& c : std::vector<testing::BadInput>{
           {args(folder, "--json"), "--json = with several workloads"},
           {args(folder, "--deadline 3"), "--deadline = with several workloads"},
           {"search --workload " + (kTmp / "in").string(), "only `kareus plan` takes a folder"},
           {"simulate --workload a.json --workload b.json", "only `kareus plan` sweeps"},
       })
    testing::expect_rejected(KAREUS_BINARY, c);
  fs::create_directories(kTmp / "empty");
  testing::expect_rejected(KAREUS_BINARY, {args("--workload " + (kTmp / "empty").string(), ""),
                                           "a folder with at least one workload .json file"});
  EXPECT_FALSE(fs::exists(kTmp / "out"));
}

}  // namespace
}  // namespace kareus
