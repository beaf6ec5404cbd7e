// SPDX-License-Identifier: Apache-2.0
// Composition against direct emulation (Kareus §4.4): an instruction option composed from
// per-partition measurements must predict what running the whole instruction with those
// configurations gives, without the artifact's x1.15 fudge factor.
#include <gtest/gtest.h>

#include <set>

#include "common/workloads.hpp"
#include "kareus/core/rng.hpp"
#include "kareus/executor/executor.hpp"
#include "kareus/planner/composition.hpp"
#include "searched_keys.hpp"

namespace kareus::planner {
namespace {

using workload::Direction;

struct Case {
  std::string name;
  const char* gpu;
  int tp, cp;
  friend void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }
};

class CompositionVsDirect : public ::testing::TestWithParam<Case> {};

TEST_P(CompositionVsDirect, RandomOptionsMatchWithinThreePercent) {
  const auto& c = GetParam();
  const auto w = kareus::testing::llama3b(c.tp, c.cp, c.gpu);
  const emulator::Emulator emu(w.gpu);
  const auto keys = kareus::testing::searched_keys(w, search::Strategy::kExhaustive);
  const auto clocks = w.gpu.search_clocks();
  Rng rng(20260117);
  int checked = 0;
  std::set<std::string> configured_keys;
  for (int stage = 0; stage < w.parallelism.pp; ++stage) {
    for (Direction d : {Direction::kForward, Direction::kBackward}) {
      const auto options = composed_options(w, emu, stage, d, clocks, keys);
      ASSERT_FALSE(options.empty());
      std::vector<std::size_t> overlapped;
      for (std::size_t i = 0; i < options.size(); ++i)
        if (options[i].nanobatch) overlapped.push_back(i);
      ASSERT_FALSE(overlapped.empty()) << "stage " << stage;
      for (std::size_t pick : rng.sample_without_replacement(overlapped.size(), 6)) {
        const auto& o = options[overlapped[pick]];
        for (const auto& [key, cfg] : o.configs) configured_keys.insert(key);
        const auto direct = emulator::run_instruction_nanobatch(
            w, emu, stage, d, emulator::ClockPolicy::locked_at(o.clock), o.configs, o.recompute);
        SCOPED_TRACE(::testing::Message() << "stage " << stage << " "
                                          << (d == Direction::kForward ? "forward" : "backward")
                                          << " at " << o.clock.value() << " MHz");
        EXPECT_NEAR(o.time / direct.time, 1.0, 0.03);
        EXPECT_NEAR(o.dynamic_energy / direct.dynamic_energy, 1.0, 0.03);
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 20);
  // Every searched key was exercised by some pick, so none of them escapes the comparison.
  for (const auto& [key, r] : keys) EXPECT_TRUE(configured_keys.count(key)) << key;
}

INSTANTIATE_TEST_SUITE_P(Workloads, CompositionVsDirect,
                         ::testing::Values(Case{"A100_TP8", "a100-sxm4-40gb", 8, 1},
                                           Case{"A100_CP2_TP4", "a100-sxm4-40gb", 4, 2},
                                           Case{"H100_TP8", "h100-sxm", 8, 1}),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace kareus::planner
