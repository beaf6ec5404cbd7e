// SPDX-License-Identifier: Apache-2.0
// The measurement protocol and the emulator executor.
#include "kareus/executor/executor.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "common/workloads.hpp"
#include "kareus/core/error.hpp"
#include "kareus/executor/instruction.hpp"

namespace kareus::executor {
namespace {

partition::Partition fwd_attn() {
  return partition::representative_partitions(testing::llama3b(8, 1)).front();
}

TEST(Protocol, WindowAndWallTime) {
  const MeasurementProtocol p;
  EXPECT_EQ(p.window_iterations(milliseconds(1)), 5000);
  EXPECT_EQ(p.window_iterations(Seconds(7)), 1);
  // settle 2 s + cooldown 5 s + (10 + 100 + 10 + 5000) iterations of 1 ms.
  EXPECT_NEAR(p.wall_time(milliseconds(1), true).value(), 12.12, 1e-9);
  EXPECT_NEAR(p.wall_time(milliseconds(1), false).value(), 10.12, 1e-9);
  MeasurementProtocol bad;
  bad.window = Seconds(0);
  EXPECT_THROW(bad.validate(), Error);
}

TEST(Protocol, ReduceTakesTheSlowestRankAndPerGpuEnergy) {
  WindowReading r;
  r.iterations = 10;
  r.rank_elapsed = {Seconds(1.0), Seconds(1.2)};
  r.rank_energy = {Joules(300), Joules(500)};
  const ReducedReading out = reduce(r, Watts(85));
  EXPECT_DOUBLE_EQ(out.time.value(), 0.12);
  EXPECT_DOUBLE_EQ(out.total_energy.value(), 40.0);
  EXPECT_DOUBLE_EQ(out.dynamic_energy.value(), 40.0 - 85 * 0.12);
  r.rank_energy.pop_back();
  EXPECT_THROW(reduce(r, Watts(85)), Error);
}

TEST(EmulatorExecutor, MatchesTheEmulatorAndChargesTheProtocol) {
  const auto w = testing::llama3b(8, 1);
  const partition::Partition p = fwd_attn();
  EmulatorExecutor ex{emulator::Emulator(w.gpu)};
  const partition::ExecConfig a{"linear_0", 12, MHz(1230)};
  const partition::ExecConfig b{"norm_0", 21, MHz(1410)};
  const std::vector<Measurement> m = ex.measure(p, {a, b});
  const emulator::PartitionConfig pa{"linear_0", 12};
  const auto exact = emulator::run_partition_with(emulator::Emulator(w.gpu), p, &pa,
                                                  emulator::ClockPolicy::locked_at(MHz(1230)));
  EXPECT_NEAR(m[0].time.value(), exact.time.value(), 1e-12);
  EXPECT_NEAR(m[0].total_energy.value(), exact.total_energy().value(), 1e-9);
  EXPECT_NEAR(m[0].dynamic_energy.value(),
              (exact.total_energy() - w.gpu.static_power * exact.time).value(), 1e-9);
  // Eight GPUs of the TP group; each config changed the clock.
  EXPECT_NEAR(m[0].gpu_cost.value(), 8 * ex.protocol().wall_time(m[0].time, true).value(), 1e-9);
  EXPECT_NEAR(ex.elapsed().value(), (m[0].gpu_cost.value() + m[1].gpu_cost.value()) / 8, 1e-9);
  // The same clock again: no settle.
  const Measurement again = ex.measure(p, {{"attn_0", 3, MHz(1230)}, {"norm_0", 3, MHz(1230)}})[1];
  EXPECT_NEAR(again.gpu_cost.value(), 8 * ex.protocol().wall_time(again.time, false).value(), 1e-9);
}

TEST(EmulatorExecutor, NoiseIsSeededPerConfig) {
  const auto w = testing::llama3b(8, 1);
  const partition::Partition p = fwd_attn();
  const partition::ExecConfig a{"linear_0", 12, MHz(1230)};
  const partition::ExecConfig b{"norm_0", 21, MHz(1410)};
  EmulatorExecutor first(emulator::Emulator(w.gpu, {0.03, 0.0}), {}, 7);
  EmulatorExecutor second(emulator::Emulator(w.gpu, {0.03, 0.0}), {}, 7);
  EmulatorExecutor other(emulator::Emulator(w.gpu, {0.03, 0.0}), {}, 8);
  const auto ab = first.measure(p, {a, b});
  const auto ba = second.measure(p, {b, a});
  EXPECT_DOUBLE_EQ(ab[0].time.value(), ba[1].time.value());
  EXPECT_DOUBLE_EQ(ab[1].total_energy.value(), ba[0].total_energy.value());
  EXPECT_NE(other.measure(p, {a})[0].time.value(), ab[0].time.value());
  EXPECT_NE(first.name(), EmulatorExecutor(emulator::Emulator(w.gpu)).name());
}

// Repeats are independent samples (a real GPU's readings differ run to run), the n-th sample is
// the same in every run (resume), and their mean tends to the noise-free value.
TEST(EmulatorExecutor, RepeatsAreIndependentSamplesThatAverageToTheTruth) {
  const auto w = testing::llama3b(8, 1);
  const partition::Partition p = fwd_attn();
  const partition::ExecConfig a{"linear_0", 12, MHz(1230)};
  EmulatorExecutor noisy(emulator::Emulator(w.gpu, {0.03, 0.0}), {}, 7);
  EmulatorExecutor again(emulator::Emulator(w.gpu, {0.03, 0.0}), {}, 7);
  const double truth = EmulatorExecutor(emulator::Emulator(w.gpu)).measure(p, {a})[0].time.value();
  EXPECT_DOUBLE_EQ(noisy.measure_repeat(p, {a}, 0)[0].time.value(),
                   again.measure(p, {a})[0].time.value());
  constexpr int kRepeats = 400;
  double sum = 0.0;
  double first = 0.0;
  for (int r = 0; r < kRepeats; ++r) {
    const double t = noisy.measure_repeat(p, {a}, static_cast<std::size_t>(r))[0].time.value();
    if (r == 0) {
      first = t;
    } else {
      EXPECT_NE(t, first) << "repeat " << r;
    }
    sum += t;
  }
  EXPECT_DOUBLE_EQ(again.measure_repeat(p, {a}, 5)[0].time.value(),
                   noisy.measure_repeat(p, {a}, 5)[0].time.value());
  // 3 % noise: one reading is off by 3 % typically, the mean of 400 by 0.15 %; allow 4 x that.
  EXPECT_NEAR(sum / kRepeats / truth, 1.0, 4 * 0.03 / std::sqrt(kRepeats));
}

}  // namespace
}  // namespace kareus::executor
