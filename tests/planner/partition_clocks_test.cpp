// SPDX-License-Identifier: Apache-2.0
// Partition clock granularity: options that change clock between the steps of an instruction,
// checked against the instruction-granularity options they extend and against direct emulation.
#include "kareus/planner/partition_clocks.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "common/workloads.hpp"
#include "kareus/core/error.hpp"
#include "kareus/core/rng.hpp"
#include "kareus/executor/executor.hpp"
#include "kareus/planner/planner.hpp"
#include "searched_keys.hpp"

namespace kareus::planner {
namespace {

using workload::Direction;

struct ClockCase {
  std::string name;
  int tp, cp;
  search::Strategy strategy;
};

// gtest would otherwise print the struct's raw bytes into ctest's test names, which then change
// from build to build (ctest labels and filters need stable names).
void PrintTo(const ClockCase& c, std::ostream* os) {
  *os << c.name;
}

class PartitionClocks : public ::testing::TestWithParam<ClockCase> {
 protected:
  void SetUp() override {
    const auto& c = GetParam();
    w_ = kareus::testing::llama3b(c.tp, c.cp);
    keys_ = kareus::testing::searched_keys(w_, c.strategy);
  }
  OptionSet instruction(int stage, Direction d) const {
    return composed_options(w_, emu(), stage, d, w_.gpu.search_clocks(), keys_);
  }
  OptionSet partition(int stage, Direction d, Seconds latency) const {
    PartitionClockOptions o;
    o.switch_latency = latency;
    return partition_clock_options(w_, emu(), stage, d, w_.gpu.search_clocks(), keys_,
                                   instruction(stage, d), o);
  }
  emulator::Emulator emu() const { return emulator::Emulator(w_.gpu); }

  workload::Workload w_;
  KeyFrontiers keys_;
};

// The least energy + lambda x time over a set: the lower convex hull probed at lambda.
double scalarised(const OptionSet& set, double lambda) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& o : set)
    best = std::min(best, o.dynamic_energy.value() + lambda * o.time.value());
  return best;
}

std::size_t with_switches(const OptionSet& set) {
  return std::count_if(set.begin(), set.end(),
                       [](const auto& o) { return !o.step_clocks.empty(); });
}

TEST_P(PartitionClocks, NeverWorseThanInstructionGranularity) {
  for (int stage = 0; stage < 2; ++stage)
    for (Direction d : {Direction::kForward, Direction::kBackward}) {
      const auto base = instruction(stage, d);
      const auto part = partition(stage, d, milliseconds(1));
      for (const auto& b : base) {
        const bool covered = std::any_of(part.begin(), part.end(), [&](const auto& p) {
          return p.time <= b.time && p.dynamic_energy <= b.dynamic_energy;
        });
        EXPECT_TRUE(covered) << "stage " << stage << " option at " << b.time.value() << " s";
      }
    }
}

TEST_P(PartitionClocks, ZeroLatencyIsAtLeastAsGoodAndSwitches) {
  std::size_t switching = 0;
  for (int stage = 0; stage < 2; ++stage)
    for (Direction d : {Direction::kForward, Direction::kBackward}) {
      const auto base = instruction(stage, d);
      const auto free = partition(stage, d, Seconds(0));
      const auto paid = partition(stage, d, milliseconds(10));
      switching += with_switches(free);
      for (double lambda : {0.0, 10.0, 100.0, 300.0, 1000.0, 3000.0, 1e4, 1e5}) {
        const double tol = 1e-9 * scalarised(base, lambda);
        EXPECT_LE(scalarised(free, lambda), scalarised(paid, lambda) + tol) << lambda;
        EXPECT_LE(scalarised(paid, lambda), scalarised(base, lambda) + tol) << lambda;
      }
    }
  // Free switching lets memory-bound steps drop their clock at no time cost, so some option of
  // some instruction must use it; otherwise the search is not looking at per-step clocks at all.
  EXPECT_GT(switching, 0u);
}

TEST_P(PartitionClocks, HugeLatencyReproducesInstructionGranularityExactly) {
  for (int stage = 0; stage < 2; ++stage)
    for (Direction d : {Direction::kForward, Direction::kBackward}) {
      const auto base = instruction(stage, d);
      const auto part = partition(stage, d, Seconds(1e6));
      ASSERT_EQ(part.size(), base.size());
      for (std::size_t i = 0; i < base.size(); ++i) {
        EXPECT_EQ(part[i].time, base[i].time);
        EXPECT_EQ(part[i].dynamic_energy, base[i].dynamic_energy);
        EXPECT_EQ(part[i].clock, base[i].clock);
        EXPECT_EQ(part[i].nanobatch, base[i].nanobatch);
        EXPECT_TRUE(part[i].step_clocks.empty());
      }
    }
}

TEST_P(PartitionClocks, OptionsMatchDirectEmulationWithinThreePercent) {
  const Watts stall(120);
  std::size_t checked = 0;
  for (int stage = 0; stage < 2; ++stage)
    for (Direction d : {Direction::kForward, Direction::kBackward}) {
      PartitionClockOptions o;
      // Short switches, so that per-step clocks win options on both layouts (CP2+TP4 gains
      // little from overlap, and 1 ms switches leave it none).
      o.switch_latency = milliseconds(0.1);
      o.switch_power = stall;
      const auto set = partition_clock_options(w_, emu(), stage, d, w_.gpu.search_clocks(), keys_,
                                               instruction(stage, d), o);
      const auto steps = instruction_steps(w_, stage, d);
      for (const auto& opt : set) {
        if (opt.step_clocks.empty()) continue;
        ASSERT_EQ(opt.step_clocks.size(), steps.size());
        EXPECT_EQ(opt.clock, opt.step_clocks.front());
        const auto direct = emulate_step_clocks(w_, emu(), stage, d, opt, o.switch_latency, stall);
        SCOPED_TRACE(::testing::Message()
                     << "stage " << stage << " option at " << opt.time.value());
        EXPECT_NEAR(opt.time / direct.time, 1.0, 0.03);
        EXPECT_NEAR(opt.dynamic_energy / direct.dynamic_energy, 1.0, 0.03);
        ++checked;
      }
    }
  EXPECT_GT(checked, 0u);
}

TEST_P(PartitionClocks, StepsCoverTheInstructionInRunOrder) {
  // At one clock, the steps run one by one add up to the emulator's own nanobatch execution.
  for (int stage = 0; stage < 2; ++stage)
    for (Direction d : {Direction::kForward, Direction::kBackward}) {
      for (const auto& o : instruction(stage, d)) {
        if (!o.nanobatch) continue;
        const auto policy = emulator::ClockPolicy::locked_at(o.clock);
        const auto whole = emulator::run_instruction_nanobatch(w_, emu(), stage, d, policy,
                                                               o.configs, o.recompute);
        const auto steps = emulate_step_clocks(w_, emu(), stage, d, o, Seconds(1), Watts(1000));
        EXPECT_NEAR(steps.time / whole.time, 1.0, 1e-12);
        EXPECT_NEAR(steps.dynamic_energy / whole.dynamic_energy, 1.0, 1e-12);
        break;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Workloads, PartitionClocks,
                         ::testing::Values(ClockCase{"TP8_kareus", 8, 1, search::Strategy::kKareus},
                                           ClockCase{"CP2_TP4_exhaustive", 4, 2,
                                                     search::Strategy::kExhaustive}),
                         [](const auto& info) { return info.param.name; });

TEST(PartitionClockPlan, ScheduleCarriesStepClocksAndValidates) {
  const auto w = kareus::testing::llama3b(8, 1);
  PlanOptions opt;
  opt.methods = {Method::kKareus};
  opt.clock_granularity = ClockGranularity::kPartition;
  opt.partition_clocks.switch_latency = Seconds(0);
  const auto result = plan(w, opt);
  const auto& m = result.methods.at(Method::kKareus);
  std::size_t with_steps = 0;
  for (const auto& point : m.frontier) {
    const auto s = make_schedule(result, Method::kKareus, point);
    validate_schedule(s, "schedule");
    for (const auto& stage : s.stages)
      for (const auto& in : stage.instructions)
        if (!in.step_clocks.empty()) {
          ++with_steps;
          const auto d = in.direction == "forward" ? Direction::kForward : Direction::kBackward;
          EXPECT_EQ(in.step_clocks.size(), instruction_steps(w, stage.stage, d).size());
        }
  }
  EXPECT_GT(with_steps, 0u);
}

TEST(PartitionClockPlan, GranularityNamesParse) {
  EXPECT_EQ(parse_clock_granularity("instruction"), ClockGranularity::kInstruction);
  EXPECT_EQ(parse_clock_granularity("partition"), ClockGranularity::kPartition);
  try {
    parse_clock_granularity("kernel");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("allowed: instruction, partition"), std::string::npos);
  }
}

}  // namespace
}  // namespace kareus::planner
