// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/run_cli.hpp"
#include "kareus/core/json.hpp"

namespace kareus {
namespace {

const std::string kDemo =
    "simulate --model llama3.2-3b --gpu a100-sxm4-40gb --tp 8 --pp 2 --mbs 8 --seq 4096 "
    "--microbatches 8 --recompute full";

testing::CliRun kareus(const std::string& args) {
  return testing::run_cli(KAREUS_BINARY, args);
}

TEST(SimulateCli, JsonHasTheDocumentedFields) {
  const auto r = kareus(kDemo + " --clock 1410 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = JsonDocument::parse(r.out, "stdout");
  const auto root = doc.root();
  EXPECT_GT(root.positive_number("iteration_time_s"), 4.0);
  const auto e = root.at("energy_j");
  EXPECT_NEAR(e.number("total"), e.number("dynamic") + e.number("static"), 1e-6);
  EXPECT_EQ(root.at("workload").at("parallelism").integer("tp"), 8);
  EXPECT_GT(root.at("per_gpu").positive_number("average_power_w"), 85.0);
}

TEST(SimulateCli, WorkloadFileEqualsFlags) {
  const auto path = std::filesystem::temp_directory_path() / "kareus_wl.json";
  std::ofstream(path) << R"({"model": "llama3.2-3b", "gpu": "a100-sxm4-40gb",
    "parallelism": {"tp": 8, "pp": 2, "microbatch_size": 8, "sequence_length": 4096,
                    "microbatches": 8, "recompute": "full"}})";
  const auto a = kareus("simulate --workload " + path.string() + " --json");
  const auto b = kareus(kDemo + " --json");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(JsonDocument::parse(a.out, "a").root().number("iteration_time_s"),
            JsonDocument::parse(b.out, "b").root().number("iteration_time_s"));
}

TEST(SimulateCli, BreakdownAndNanobatchRun) {
  const auto r = kareus(kDemo + " --breakdown --execution nanobatch --governor default");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("per-kernel totals"), std::string::npos);
  EXPECT_NE(r.out.find("qkv_proj"), std::string::npos);
}

TEST(SimulateCli, BadInputGivesOneLineAndExitCode2) {
  const auto bad_json = std::filesystem::temp_directory_path() / "kareus_bad.json";
  std::ofstream(bad_json) << R"({"model": "llama3.2-3b", "gpu": )";
  const auto missing = std::filesystem::temp_directory_path() / "kareus_missing.json";
  std::ofstream(missing) << R"({"model": "llama3.2-3b", "gpu": "a100-sxm4-40gb",
    "parallelism": {"tp": 8, "sequence_length": 4096, "microbatches": 8}})";
  const std::vector<testing::BadInput> cases = {
      {"simulate --model gpt5 --tp 8", "model = gpt5: unknown model"},
      {"simulate --model llama3.2-3b --gpu v100", "gpu = v100: unknown GPU"},
      {"simulate --model llama3.2-3b --tp 5", "tp = 5: must divide num_attention_heads (24)"},
      {"simulate --model llama3.2-3b --tp 8 --mbs 3 --execution nanobatch",
       "microbatch_size = 3: must be even"},
      {"simulate --model llama3.2-3b --mbs -2", "microbatch_size = -2"},
      {"simulate --model llama3.2-3b --tp eight", "--tp"},
      {"simulate --model llama3.2-3b --tp 8 --clock 1412", "--clock = 1412"},
      {"simulate --model llama3.2-3b --tp 8 --execution pipelined",
       "allowed: sequential, nanobatch"},
      {"simulate --model llama3.2-3b --recompute some", "allowed: full, none"},
      {"simulate --workload " + bad_json.string(), "malformed JSON"},
      {"simulate --workload " + missing.string(), "/parallelism/microbatch_size: required"},
      {"simulate", "no workload"},
  };
  for (const auto& c : cases) {
    testing::expect_rejected(KAREUS_BINARY, c);
  }
}

}  // namespace
}  // namespace kareus
