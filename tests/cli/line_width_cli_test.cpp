// SPDX-License-Identifier: Apache-2.0
// Every command's normal output keeps its lines within kLineWidth columns (kareus/core/wrap.hpp):
// one case per command a person reads on a terminal, named after the command.
#include <gtest/gtest.h>

#include <sstream>

#include "common/run_cli.hpp"
#include "common/scratch_dir.hpp"
#include "kareus/core/wrap.hpp"

namespace kareus {
namespace {

const testing::ScratchDir kScratch("kareus_line_width_cli");
const std::string kDemo =
    " --model llama3.2-3b --gpu a100-sxm4-40gb --tp 8 --pp 2 --mbs 8 --seq 4096 --microbatches 8";
const std::string kData = KAREUS_TEST_DATA_DIR;

struct Command {
  std::string name;  // the test's name
  std::string args;
  // gtest would otherwise print the struct's raw bytes into ctest's test names.
  friend void PrintTo(const Command& c, std::ostream* os) { *os << c.name; }
};

class LineWidth : public ::testing::TestWithParam<Command> {};

TEST_P(LineWidth, EveryLineFits) {
  const auto r = testing::run_cli(KAREUS_BINARY, GetParam().args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_FALSE(r.out.empty());
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);)
    EXPECT_LE(display_width(line), kLineWidth) << line;
}

std::vector<Command> commands() {
  const std::string db = " --db " + (kScratch.path() / "store.sqlite").string();
  return {
      {"gpus", "gpus"},
      {"gpus_sources", "gpus --sources"},
      {"models", "models"},
      {"simulate", "simulate" + kDemo},
      {"simulate_breakdown", "simulate" + kDemo + " --breakdown"},
      {"search", "search" + kDemo + " --partition fwd_attn --budget 20 --quiet" + db},
      {"plan", "plan" + kDemo + " --no-db --methods megatron,perseus"},
      {"plan_help", "plan --help"},
      {"simulate_help", "simulate --help"},
      {"help", "--help"},
      {"overlap_sweep",
       "overlap --gpu a100-sxm4-40gb --shape 8192x8192x8192 --bytes 64MiB "
       "--sweep-sms 1..32"},
      {"kernel_dvfs", "kernel-dvfs --model llama3.2-3b --gpu a100-sxm4-40gb --layers 1"},
      {"run_schedule_dry_run",
       "run-schedule --dry-run --schedule " + kData + "/runtime/two_stages.json"},
      {"pipeline_solve",
       "pipeline-solve --stage-profile " + kData +
           "/frontier/gpt3-175b+a40_bf16.csv --microbatches 8 --p-blocking 70.38"},
  };
}

INSTANTIATE_TEST_SUITE_P(Commands, LineWidth, ::testing::ValuesIn(commands()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace kareus
