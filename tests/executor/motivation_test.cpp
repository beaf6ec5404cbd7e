// SPDX-License-Identifier: Apache-2.0
// The behaviours the Kareus paper measured on real A100s (§3, "Motivation figures" and
// Theorem 1 in shared/reference/kareus-paper.md), as properties of the emulator.
#include <gtest/gtest.h>

#include <limits>

#include "common/workloads.hpp"
#include "kareus/executor/instruction.hpp"

namespace kareus::emulator {
namespace {

struct Point {
  std::string slot;
  int sms = 0;
  RunResult run;
};

class MotivationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (auto& p : partition::representative_partitions(w))
      if (p.key == "fwd_attn") attn = p;
    ASSERT_FALSE(attn.compute.empty());
  }
  RunResult run(const std::string& slot, int sms, double mhz) const {
    PartitionConfig c{slot, sms};
    return run_partition_with(emu, attn, &c, ClockPolicy::locked_at(MHz(mhz)));
  }
  Point best(double mhz, const std::vector<std::string>& slots) const {
    Point b{"", 0, {}};
    double e = std::numeric_limits<double>::infinity();
    for (const auto& s : slots)
      for (int sms = 1; sms <= 30; ++sms) {
        const RunResult r = run(s, sms, mhz);
        if (r.total_energy().value() < e) {
          e = r.total_energy().value();
          b = {s, sms, r};
        }
      }
    return b;
  }

  // Llama-3.2-3B attention-layer forward with TP4 on A100, as in the paper's Figure 3.
  workload::Workload w = testing::llama3b(4, 1);
  Emulator emu{w.gpu};
  partition::Partition attn;
};

TEST_F(MotivationTest, TooFewSmsExposeAHandfulHideManySlowTheGemm) {
  const Point opt = best(1410, {"linear_0"});
  EXPECT_GE(opt.sms, 3);
  EXPECT_LE(opt.sms, 12) << "a handful of SMs should be energy-optimal";
  const RunResult few = run("linear_0", 2, 1410);
  EXPECT_GT(few.time.value(), 1.3 * opt.run.time.value()) << "2 SMs leave the AllReduce exposed";
  EXPECT_GT(few.total_energy(), opt.run.total_energy());
  const RunResult many = run("linear_0", 30, 1410);
  EXPECT_GT(many.time, opt.run.time) << "30 SMs slow the GEMM";
  EXPECT_GT(many.total_energy(), opt.run.total_energy());
}

TEST_F(MotivationTest, LaunchingBesideAMemoryBoundOpCostsMoreThanBesideAGemm) {
  const Point opt = best(1410, {"linear_0"});
  EXPECT_GT(run("norm_0", opt.sms, 1410).total_energy(), opt.run.total_energy());
  EXPECT_GT(run("norm_0", opt.sms, 1410).time, opt.run.time);
}

TEST_F(MotivationTest, LowerClockFavoursMemoryBoundLaunchPoints) {
  // At 1100 MHz GEMMs are slower while memory-bound ops are not, so giving SMs away during a
  // GEMM costs relatively more: the energy-optimal launch point is a memory-bound op (RoPE in
  // the paper), and launching beside the first GEMM falls further behind it.
  const std::vector<std::string> all = {"norm_0", "linear_0", "rope_0", "attn_0"};
  EXPECT_NE(best(1100, all).slot, "linear_0");
  auto gemm_gap = [&](double mhz) {
    return best(mhz, {"linear_0"}).run.total_energy() / best(mhz, all).run.total_energy() - 1.0;
  };
  EXPECT_GT(gemm_gap(1100), 0.0);
}

TEST_F(MotivationTest, ExposedCommunicationHurtsMoreAtLowClocks) {
  // Static power is a larger share of a slower run, so exposure costs relatively more energy.
  auto penalty = [&](double mhz) {
    return run("linear_0", 2, mhz).total_energy() / best(mhz, {"linear_0"}).run.total_energy();
  };
  EXPECT_GT(penalty(1100), 1.0);
  EXPECT_GT(penalty(1410), 1.0);
}

TEST_F(MotivationTest, OverlapThrottlesUnderTheGovernorAndALockedAverageWinsTheorem1) {
  const auto q = [] {
    workload::WorkloadRequest r;
    r.model = "qwen3-1.7b";
    r.gpu = "a100-sxm4-40gb";
    r.parallelism = {8, 1, 2, 1, 8, 4096, 8, workload::Recompute::kFull, {}, 8};
    return workload::make_workload(r);
  }();
  const Emulator e(q.gpu);
  const RunResult gov = run_instruction_nanobatch(q, e, 0, workload::Direction::kForward,
                                                  ClockPolicy::governor(q.gpu.power_limit_default));
  EXPECT_LT(gov.average_clock().value(), 1405.0) << "overlap at 1410 MHz should throttle";
  const RunResult locked = run_instruction_nanobatch(q, e, 0, workload::Direction::kForward,
                                                     ClockPolicy::locked_at(gov.average_clock()));
  EXPECT_LE(locked.time.value(), gov.time.value() * 1.005) << "as fast";
  EXPECT_LT(locked.total_energy(), gov.total_energy()) << "and less energy";
}

}  // namespace
}  // namespace kareus::emulator
