// SPDX-License-Identifier: Apache-2.0
// The energy ledger and the power model's properties: where a run's time and energy go adds up
// to the run, overlap without stretch never costs energy, the power limit lowers the clock
// instead of raising power, memory-bound kernels gain most from a lower clock, and repeated noisy
// readings average toward the noise-free value.
#include <gtest/gtest.h>

#include <cmath>

#include "common/workloads.hpp"
#include "kareus/core/rng.hpp"
#include "kareus/executor/emulator.hpp"
#include "kareus/executor/executor.hpp"
#include "kareus/executor/iteration.hpp"
#include "kareus/partition/config_space.hpp"
#include "kareus/partition/partition.hpp"

namespace kareus::emulator {
namespace {

using workload::Collective;
using workload::Kernel;

Kernel random_compute(Rng& rng) {
  if (rng.uniform(0, 1) < 0.3)
    return workload::memory_kernel("mem", workload::SlotClass::kNorm, rng.uniform(1e6, 1e9));
  return workload::gemm_kernel("gemm", std::round(rng.uniform(128, 16384)),
                               std::round(rng.uniform(128, 16384)),
                               std::round(rng.uniform(128, 16384)));
}

Kernel random_collective(Rng& rng) {
  return workload::collective_kernel("comm", Collective::kAllReduce, rng.uniform(1e5, 5e8),
                                     static_cast<int>(rng.integer(2, 8)), workload::Link::kNvlink);
}

// A GPU on which a collective's traffic slows neither kernel: only SMs are shared.
GpuSpec without_interference(const std::string& name) {
  GpuSpec gpu = load_gpu(name);
  gpu.hbm_bytes_per_link_byte = 0;
  gpu.collective_stretch_latency_bound = 0;
  gpu.collective_stretch_memory = 0;
  return gpu;
}

// A compute-bound product (8 tiles wide, a long K) whose tiles fit in one wave on the SMs a
// collective on `comm_sms` (at most 20) leaves, and fill more than half the GPU so that its
// reduction is not split: taking those SMs adds no wave, so nothing stretches it.
Kernel one_wave_gemm(Rng& rng, const GpuSpec& gpu, int comm_sms) {
  const double rows =
      static_cast<double>(rng.integer(gpu.sm_count / 16 + 1, (gpu.sm_count - comm_sms) / 8));
  return workload::gemm_kernel("gemm", 128 * rows, 1024, std::round(rng.uniform(4096, 16384)));
}

double board_energy(const RunLedger& l) {
  return (l.idle + l.compute_dynamic + l.collective_dynamic).value();
}

double ledger_time(const RunLedger& l) {
  return (l.compute_time + l.overlap_time + l.collective_time + l.launch_gap_time).value();
}

TEST(Ledger, APartitionsPartsAddUpToItsTimeAndBoardEnergy) {
  const Emulator emu(load_gpu("a100-sxm4-40gb"));
  Rng rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<Kernel> compute;
    for (int i = 0, n = static_cast<int>(rng.integer(1, 4)); i < n; ++i)
      compute.push_back(random_compute(rng));
    const Kernel comm = random_collective(rng);
    PartitionProgram p;
    p.compute = compute;
    p.comm = &comm;
    p.comm_sms = static_cast<int>(rng.integer(1, 40));
    p.launch_index = static_cast<int>(rng.integer(0, static_cast<long>(compute.size())));
    const ClockPolicy policy = rng.uniform(0, 1) < 0.5
                                   ? ClockPolicy::governor(emu.gpu().power_limit_default)
                                   : ClockPolicy::locked_at(MHz(900 + 30 * rng.integer(0, 17)));
    const RunResult r = emu.run_partition(p, policy);
    EXPECT_NEAR(board_energy(r.ledger), r.total_energy().value(), 1e-9 * r.total_energy().value())
        << "trial " << trial;
    EXPECT_NEAR(ledger_time(r.ledger), r.time.value(), 1e-9 * r.time.value()) << "trial " << trial;
    EXPECT_GE(r.ledger.compute_dynamic.value(), 0.0);
    EXPECT_GE(r.ledger.collective_dynamic.value(), 0.0);
  }
}

TEST(Ledger, AnIterationsPartsAddUpToTheJobForEveryLayoutAndExecution) {
  for (const auto& w : {kareus::testing::llama3b(8, 1), kareus::testing::llama3b(4, 2),
                        kareus::testing::llama3b(8, 1, "h100-sxm")}) {
    const Emulator emu(w.gpu);
    for (Execution e : {Execution::kSequential, Execution::kNanobatch}) {
      for (double mhz : {0.0, 1200.0}) {
        IterationOptions o;
        o.execution = e;
        if (mhz > 0) o.clock = ClockPolicy::locked_at(MHz(mhz));
        const IterationResult r = simulate_iteration(w, emu, o);
        const double gpus = r.gpus;
        EXPECT_NEAR(r.ledger.total().value(), r.total_energy().value(),
                    1e-9 * r.total_energy().value());
        EXPECT_NEAR(r.ledger.gpu_time().value(), r.iteration_time.value() * gpus,
                    1e-9 * r.iteration_time.value() * gpus);
        EXPECT_GE(r.ledger.wait_time.value(), 0.0);
        // Static and waits are the blocked power over all GPU time, as Kareus and Perseus count.
        EXPECT_NEAR((r.ledger.static_energy + r.ledger.pipeline_waits).value(),
                    r.static_energy.value(), 1e-9 * r.static_energy.value());
      }
    }
  }
}

// Overlap saves time by running two kernels at once; when neither is slowed by the other, the
// only energy that changes is the idle power of the time saved.
TEST(PowerModel, WithoutStretchOverlapNeverCostsMoreEnergyThanBackToBack) {
  const GpuSpec gpu = without_interference("a100-sxm4-40gb");
  const Emulator emu(gpu);
  Rng rng(17);
  for (int trial = 0; trial < 300; ++trial) {
    const int comm_sms = static_cast<int>(rng.integer(1, 20));
    const Kernel g = one_wave_gemm(rng, gpu, comm_sms);
    const Kernel comm = random_collective(rng);
    const ClockPolicy policy = ClockPolicy::locked_at(MHz(900 + 30 * rng.integer(0, 10)));
    PartitionProgram together, after;
    together.compute = after.compute = std::span<const Kernel>(&g, 1);
    together.comm = after.comm = &comm;
    together.comm_sms = after.comm_sms = comm_sms;
    together.launch_index = 0;
    after.launch_index = 1;
    const RunResult t = emu.run_partition(together, policy);
    const RunResult a = emu.run_partition(after, policy);
    ASSERT_NEAR(emu.co_run(g, comm, comm_sms, policy).compute_duration.value(),
                emu.compute_alone(g, gpu.sm_count, policy.locked).duration, 1e-12);
    EXPECT_LE(t.total_energy().value(), a.total_energy().value() * (1 + 1e-12))
        << "trial " << trial;
    EXPECT_LE(t.time.value(), a.time.value() * (1 + 1e-12)) << "trial " << trial;
  }
}

// Adding a collective beside a GEMM that it does not slow adds its power: the pair demands more
// than the GEMM alone. (A GEMM stretched by interference draws less, and the pair may demand
// less than the GEMM alone: docs/emulator.md.)
TEST(PowerModel, AtThePowerLimitMoreDemandLowersTheClockNotRaisesPower) {
  const GpuSpec gpu = without_interference("a100-sxm4-40gb");
  const Emulator emu(gpu);
  const ClockPolicy at_max = ClockPolicy::locked_at(gpu.clock_max);
  Rng rng(23);
  int throttled = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const int sms = static_cast<int>(rng.integer(1, 20));
    const Kernel g = one_wave_gemm(rng, gpu, sms);
    const Kernel comm = random_collective(rng);
    const RunResult alone = emu.run_kernel(g, at_max);
    const CoRun both = emu.co_run(g, comm, sms, at_max);
    EXPECT_LE(both.power.value(), gpu.power_limit_default.value() + 1e-9) << "trial " << trial;
    EXPECT_LE(alone.average_power().value(), gpu.power_limit_default.value() + 1e-9);
    EXPECT_LE(both.clock.value(), alone.average_clock().value() + 1e-9) << "trial " << trial;
    if (alone.average_clock() < gpu.clock_max) ++throttled;
  }
  EXPECT_GT(throttled, 0) << "no GEMM met the power limit: the property was not exercised";
}

TEST(PowerModel, AMemoryBoundKernelSavesMoreEnergyThanAGemmWhenItsClockDrops) {
  for (const char* gpu : {"a100-sxm4-40gb", "h100-sxm", "rtx3080ti"}) {
    const Emulator emu(load_gpu(gpu));
    const Kernel mem = workload::memory_kernel("norm", workload::SlotClass::kNorm, 2e9);
    const Kernel gemm = workload::gemm_kernel("gemm", 8192, 8192, 8192);
    const MHz top = emu.gpu().search_clock_max;
    const MHz low = emu.gpu().search_clock_min;
    const auto saved = [&](const Kernel& k) {
      return 1.0 - emu.run_kernel(k, ClockPolicy::locked_at(low)).total_energy() /
                       emu.run_kernel(k, ClockPolicy::locked_at(top)).total_energy();
    };
    EXPECT_GT(saved(mem), saved(gemm)) << gpu;
    EXPECT_GT(saved(mem), 0.0) << gpu;
  }
}

TEST(Noise, EachReadOfAConfigurationIsNewAndRepeatsAverageToTheNoiseFreeValue) {
  const auto w = kareus::testing::llama3b(8, 1);
  const auto parts = partition::representative_partitions(w);
  const partition::Partition& p = parts.front();
  const partition::ExecConfig config{p.slots.front().name, 6, MHz(1200)};
  executor::EmulatorExecutor exact{Emulator(w.gpu)};
  executor::EmulatorExecutor noisy{Emulator(w.gpu, EmulatorOptions{0.05, 0.0}),
                                   executor::MeasurementProtocol{}, 9};
  const double truth = exact.measure(p, {config}).at(0).total_energy.value();
  const double first = noisy.measure(p, {config}).at(0).total_energy.value();
  const double second = noisy.measure(p, {config}).at(0).total_energy.value();
  EXPECT_NE(first, second) << "a second read gave the first read's noise again";
  // Read 0 is reproducible: the store's readings from earlier runs stay valid.
  executor::EmulatorExecutor again{Emulator(w.gpu, EmulatorOptions{0.05, 0.0}),
                                   executor::MeasurementProtocol{}, 9};
  EXPECT_EQ(again.measure(p, {config}).at(0).total_energy.value(), first);
  double sum = first + second;
  const int n = 400;
  for (int i = 2; i < n; ++i) sum += noisy.measure(p, {config}).at(0).total_energy.value();
  // sigma 5 % on the dynamic part; the mean of n reads is within 4 standard errors.
  EXPECT_NEAR(sum / n / truth, 1.0, 4 * 0.05 / std::sqrt(n));
  // An explicit repeat index reads that repeat, and the next plain read goes past it.
  const double tenth = noisy.measure_repeat(p, {config}, 1000).at(0).total_energy.value();
  EXPECT_NE(noisy.measure(p, {config}).at(0).total_energy.value(), tenth);
}

}  // namespace
}  // namespace kareus::emulator
