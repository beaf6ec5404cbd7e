// The emulator against the published curves it is calibrated to, and its invariants.
#include <gtest/gtest.h>

#include "kareus/executor/emulator.hpp"
#include "kareus/hardware/gpu_spec.hpp"

namespace kareus::emulator {
namespace {

using workload::Kernel;

Kernel gemm(double m, double n, double k) {
  Kernel g;
  g.name = "gemm";
  g.kind = workload::KernelKind::kGemm;
  g.flops = 2 * m * n * k;
  g.bytes = 2 * (m * k + k * n + m * n);
  return g;
}

Kernel reduce_scatter(double bytes, int group) {
  Kernel c;
  c.name = "rs";
  c.kind = workload::KernelKind::kCollective;
  c.collective = workload::Collective::kReduceScatter;
  c.comm_bytes = bytes;
  c.group_size = group;
  return c;
}

class EmulatorTest : public ::testing::Test {
 protected:
  Emulator emu{load_gpu("a100-sxm4-40gb")};
};

TEST_F(EmulatorTest, GemmThroughputFollowsNanoFlowSmCurve) {
  const Kernel g = gemm(16384, 8192, 8192);  // large enough that launch overhead is noise
  const double full = emu.kernel_time(g, MHz(1410), 108).value();
  for (auto [sms, share] : {std::pair{20, 0.30}, {40, 0.57}, {60, 0.71}, {80, 0.97}}) {
    const double t = emu.kernel_time(g, MHz(1410), sms).value();
    EXPECT_NEAR(full / t, share, 0.01) << sms << " SMs";
  }
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

TEST_F(EmulatorTest, CollectiveBandwidthFollowsMscclppBlocks) {
  // ReduceScatter of 32 MB on 8 x A100: 92 / 159 / 181 GB/s bus bandwidth at 8 / 16 / 32 blocks.
  const Kernel rs = reduce_scatter(32e6, 8);
  for (auto [sms, busbw] : {std::pair{8, 92.0}, {16, 159.0}, {32, 181.0}}) {
    const double t = emu.kernel_time(rs, MHz(1410), sms).value();
    EXPECT_NEAR(7.0 / 8.0 * 32e6 / t / 1e9, busbw, 0.05 * busbw) << sms << " SMs";
  }
  // Never beyond the NCCL ceiling, however many SMs.
  const double t = emu.kernel_time(reduce_scatter(4e9, 8), MHz(1410), 108).value();
  EXPECT_LE(7.0 / 8.0 * 4e9 / t / 1e9, 230.0);
}

TEST_F(EmulatorTest, StaticEnergyIsStaticPowerTimesTime) {
  const Kernel g = gemm(8192, 8192, 8192);
  const RunResult r = emu.run_kernel(g, ClockPolicy::locked_at(MHz(1200)));
  EXPECT_NEAR(r.static_energy.value(), 85.0 * r.time.value(), 1e-9);
  EXPECT_GT(r.dynamic_energy.value(), 0);
  EXPECT_NEAR(r.average_clock().value(), 1200, 1e-6);
}

TEST_F(EmulatorTest, PowerLimitCapsEvenLockedClocks) {
  const Kernel g = gemm(16384, 16384, 16384);
  const RunResult r = emu.run_kernel(g, ClockPolicy::locked_at(MHz(1410)));
  EXPECT_LE(r.average_power().value(), 400.0 + 1e-6);
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
      kernels.push_back(gemm(4096 * rng.integer(1, 4), 4096, 4096 * rng.integer(1, 3)));
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
