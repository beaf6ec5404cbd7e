// SPDX-License-Identifier: Apache-2.0
// The emulator against the published curves it is calibrated to, and its invariants.
#include <gtest/gtest.h>

#include <cmath>

#include "gemm.hpp"
#include "kareus/executor/emulator.hpp"
#include "kareus/hardware/gpu_spec.hpp"

namespace kareus::emulator {
namespace {

using workload::Kernel;

Kernel reduce_scatter(double bytes, int group) {
  return workload::collective_kernel("rs", workload::Collective::kReduceScatter, bytes, group,
                                     workload::Link::kNvlink);
}

class EmulatorTest : public ::testing::Test {
 protected:
  Emulator emu{load_gpu("a100-sxm4-40gb")};
};

TEST_F(EmulatorTest, GemmRunsInWavesOfTiles) {
  // 128 x 128 tiles: a 1536 x 9216 product has 12 x 72 = 864 tiles, exactly 8 waves on 108 SMs.
  const Kernel g = gemm(1536, 9216, 8192);
  EXPECT_EQ(emu.launch_grid(g).ctas, 864);
  const auto math = [&](int sms) { return emu.compute_alone(g, sms, MHz(1410)).math_time; };
  // 8 waves on 108 SMs, 9 on 100 (a collective holding 8), 12 on 72.
  EXPECT_NEAR(math(100) / math(108), 9.0 / 8.0, 1e-12);
  EXPECT_NEAR(math(72) / math(108), 12.0 / 8.0, 1e-12);
  // One tile more than fills the GPU needs a whole extra wave: a partial wave idles SMs.
  const Kernel tail = gemm(1536 + 128, 9216, 8192);
  EXPECT_NEAR(emu.compute_alone(tail, 108, MHz(1410)).math_time / math(108), 9.0 / 8.0, 1e-12);
}

TEST_F(EmulatorTest, SmallProductsSplitTheReductionToFillTheGpu) {
  // 2 x 24 = 48 tiles cannot fill 108 SMs; a long K is split in two (96 tiles, one wave).
  EXPECT_EQ(emu.launch_grid(gemm(256, 3072, 16384)).ctas, 96);
  // A short K is not split below 256 elements.
  EXPECT_EQ(emu.launch_grid(gemm(256, 3072, 256)).ctas, 48);
  // Kernels without a product shape divide evenly over their SMs.
  Kernel copy;
  copy.kind = workload::KernelKind::kMemory;
  copy.bytes = 1e9;
  EXPECT_EQ(emu.launch_grid(copy).ctas, 0);
}

TEST_F(EmulatorTest, TinyKernelsWaitForTheHostLaunchPath) {
  Kernel tiny;
  tiny.kind = workload::KernelKind::kMemory;
  tiny.bytes = 1e3;
  EXPECT_DOUBLE_EQ(emu.kernel_time(tiny, MHz(1410), 108).value(),
                   emu.gpu().host_launch_interval.value());
  EXPECT_GT(emu.gpu().host_launch_interval, emu.gpu().kernel_launch_overhead);
}

TEST_F(EmulatorTest, ComputeScalesWithClockMemoryDoesNot) {
  const Kernel g = gemm(16384, 8192, 8192);
  const double ratio = emu.kernel_time(g, MHz(900), 108) / emu.kernel_time(g, MHz(1410), 108);
  EXPECT_NEAR(ratio, 1410.0 / 900.0, 0.01);
  Kernel copy;
  copy.kind = workload::KernelKind::kMemory;
  copy.bytes = 4e9;
  const double mem_ratio =
      emu.kernel_time(copy, MHz(900), 108) / emu.kernel_time(copy, MHz(1410), 108);
  EXPECT_NEAR(mem_ratio, 1.0, 0.001);
  // Below the knee even memory-bound kernels slow down.
  EXPECT_GT(emu.kernel_time(copy, MHz(420), 108) / emu.kernel_time(copy, MHz(1410), 108), 1.5);
  // Memory-bound kernels need SMs to saturate HBM (NanoFlow GEMV curve: 50 % at 30 % of SMs).
  EXPECT_NEAR(emu.kernel_time(copy, MHz(1410), 108) / emu.kernel_time(copy, MHz(1410), 32), 0.5,
              0.02);
}

TEST_F(EmulatorTest, CollectiveTimeIsFixedCostPlusRingFillPlusBusBytesOverBandwidth) {
  const Kernel rs = reduce_scatter(32e6, 8);
  const double bus = 7.0 / 8.0 * 32e6;
  // A ReduceScatter over 8 GPUs takes 7 hops to fill its ring.
  const double fill = 7 * emu.gpu().collective_fill_per_hop.value() *
                      (1 - std::exp(-bus / emu.gpu().collective_fill_bytes));
  for (int ctas : {1, 8, 32}) {
    const double bw = emu.gpu().collective_busbw(ctas, MHz(1200));
    EXPECT_NEAR(emu.kernel_time(rs, MHz(1200), ctas).value(),
                emu.gpu().collective_latency.value() + fill + bus / bw, 1e-12);
  }
  // The fill grows with the message and saturates: negligible for a tiny one.
  const Kernel tiny = reduce_scatter(1e3, 8);
  EXPECT_NEAR(emu.kernel_time(tiny, MHz(1200), 8).value(), emu.gpu().collective_latency.value(),
              1e-6);
}

TEST_F(EmulatorTest, StaticEnergyIsStaticPowerTimesTime) {
  const Kernel g = gemm(8192, 8192, 8192);
  const RunResult r = emu.run_kernel(g, ClockPolicy::locked_at(MHz(1200)));
  EXPECT_NEAR(r.static_energy.value(), 85.0 * r.time.value(), 1e-9);
  EXPECT_GT(r.dynamic_energy.value(), 0);
  // Total energy is the board power at the clock: idle power (70 W at 1200 MHz) plus what the
  // kernel draws, so "dynamic" = total - 85 W x time as Kareus and Perseus account it.
  EXPECT_GT(r.total_energy().value(), 70.0 * r.time.value());
  EXPECT_NEAR(r.average_clock().value(), 1200, 1e-6);
}

TEST_F(EmulatorTest, PowerLimitCapsEvenLockedClocks) {
  // A large GEMM would draw far more than 400 W at 1410 MHz (measured on A100: it sits at the
  // cap and the clock gives way).
  const Kernel g = gemm(16384, 16384, 16384);
  const RunResult unlimited = emu.run_kernel(g, ClockPolicy::governor(Watts(1e4)));
  EXPECT_EQ(unlimited.average_clock(), MHz(1410));
  EXPECT_GT(unlimited.average_power().value(), 440.0);
  const RunResult r = emu.run_kernel(g, ClockPolicy::locked_at(MHz(1410)));
  EXPECT_LE(r.average_power().value(), 400.0 + 1e-6);
  const MHz throttled = r.average_clock();
  EXPECT_LT(throttled.value(), 1350.0);
  // It runs at the highest clock that fits: locked there it is not throttled, one step up it
  // is throttled back to it.
  const RunResult at = emu.run_kernel(g, ClockPolicy::locked_at(throttled));
  EXPECT_NEAR(at.average_clock().value(), throttled.value(), 1e-9);
  EXPECT_NEAR(
      emu.run_kernel(g, ClockPolicy::locked_at(throttled + MHz(15))).average_clock().value(),
      throttled.value(), 1e-9);
  // The budget includes the idle power at the clock: at 900 MHz the same GEMM is not capped.
  EXPECT_NEAR(emu.run_kernel(g, ClockPolicy::locked_at(MHz(900))).average_clock().value(), 900,
              1e-9);
}

// Measured on A100 with clocks locked (large bf16 GEMM): energy is least near 900 MHz, with
// E(900)/E(1410) = 0.78-0.86 and E(1200)/E(1410) = 0.91.
TEST_F(EmulatorTest, LargeGemmEnergyFollowsMeasuredClockRatios) {
  for (const Kernel& g : {gemm(8192, 8192, 8192), gemm(16384, 8192, 4096)}) {
    const auto energy = [&](double mhz) {
      return emu.run_kernel(g, ClockPolicy::locked_at(MHz(mhz))).total_energy().value();
    };
    EXPECT_GE(energy(900) / energy(1410), 0.78);
    EXPECT_LE(energy(900) / energy(1410), 0.86);
    EXPECT_NEAR(energy(1200) / energy(1410), 0.91, 0.02);
  }
}

// Theorem 1 (Kareus App. A): with run time set by the average clock, a clock locked at the
// average of a fluctuating schedule is as fast and uses no more energy.
TEST_F(EmulatorTest, LockedAverageClockBeatsAnyFluctuatingScheduleTheorem1) {
  // The theorem's premise is that run time depends only on the clock, so launch overhead (time
  // that does not scale with the clock) is switched off here.
  GpuSpec spec = load_gpu("a100-sxm4-40gb");
  spec.kernel_launch_overhead = Seconds(0);
  const Emulator emu(spec);
  Rng rng(7);
  const auto clocks = emu.gpu().search_clocks();
  const Seconds overhead = emu.gpu().kernel_launch_overhead;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<Kernel> kernels;
    RunResult fluctuating;
    double cycles = 0;
    const int n = static_cast<int>(rng.integer(2, 8));
    for (int i = 0; i < n; ++i) {
      // One draw per statement: the order of a call's arguments differs between compilers.
      const double m = 4096.0 * rng.integer(1, 4);
      const double k = 4096.0 * rng.integer(1, 3);
      kernels.push_back(gemm(m, 4096, k));
      // Keep below the power cap so the schedule is the one asked for.
      const MHz f = clocks[rng.integer(3, clocks.size() - 1)];
      fluctuating += emu.run_kernel(kernels.back(), ClockPolicy::locked_at(f));
      cycles += (emu.kernel_time(kernels.back(), f, 108) - overhead).value() * f.value();
    }
    // The clock that runs the same compute cycles in the same time.
    const MHz average(cycles / (fluctuating.time - overhead * n).value());
    RunResult locked;
    for (const auto& k : kernels) locked += emu.run_kernel(k, ClockPolicy::locked_at(average));
    EXPECT_LE(locked.time.value(), fluctuating.time.value() * (1 + 1e-9));
    EXPECT_LE(locked.total_energy().value(), fluctuating.total_energy().value() * (1 + 1e-9));
  }
}

TEST_F(EmulatorTest, MeasurementNoiseIsSeededAndUnbiased) {
  Emulator noisy(load_gpu("a100-sxm4-40gb"), EmulatorOptions{0.03, 0.0});
  const RunResult exact =
      noisy.run_kernel(gemm(8192, 8192, 8192), ClockPolicy::locked_at(MHz(1200)));
  Rng a(1), b(1);
  EXPECT_EQ(noisy.measure(exact, a, Seconds(0)).time, noisy.measure(exact, b, Seconds(0)).time);
  double sum = 0;
  Rng rng(2);
  for (int i = 0; i < 2000; ++i) sum += noisy.measure(exact, rng, Seconds(0)).time / exact.time;
  EXPECT_NEAR(sum / 2000, 1.0, 0.005);
  Rng c(3);
  EXPECT_EQ(emu.measure(exact, c, Seconds(0)).time, exact.time);  // noise off by default
  Emulator drifting(load_gpu("a100-sxm4-40gb"), EmulatorOptions{0.0, 0.02});
  EXPECT_NEAR(drifting.measure(exact, c, Seconds(3600)).dynamic_energy / exact.dynamic_energy, 1.02,
              1e-9);
}

}  // namespace
}  // namespace kareus::emulator
