// SPDX-License-Identifier: Apache-2.0
// Behaviour on a real GPU: SM restriction of the collective, event-gated launch, and the
// executor's protocol at the current clock. Skipped with a message where no CUDA device exists.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kareus/core/error.hpp"
#include "kareus/executor/cuda_executor.hpp"
#include "partition_runner.hpp"
#include "test_workloads.hpp"

namespace kareus::executor {
namespace {

#define KAREUS_REQUIRE_CUDA_DEVICE()                                          \
  do {                                                                        \
    const CudaAvailability cuda = cuda_availability();                        \
    if (cuda.devices == 0) GTEST_SKIP() << "no CUDA device: " << cuda.reason; \
  } while (0)

Seconds per_run(cuda::PartitionRunner& runner, const cuda::LaunchPlan& plan, long runs) {
  runner.prepare(plan);
  runner.begin(plan, 3);
  runner.finish();
  runner.begin(plan, runs);
  return runner.finish() / static_cast<double>(runs);
}

TEST(CudaDevice, CollectiveOnMoreSmsCopiesFaster) {
  KAREUS_REQUIRE_CUDA_DEVICE();
  cuda::PartitionRunner runner(0);
  cuda::LaunchPlan plan;
  plan.comm = cuda::CommLaunch{256LL << 20, 2};
  const Seconds few = per_run(runner, plan, 10);
  plan.comm->sms = std::min(32, runner.sm_count() - 1);
  const Seconds many = per_run(runner, plan, 10);
  EXPECT_LT(many.value(), 0.5 * few.value())
      << "2 SMs: " << few.value() << " s, " << plan.comm->sms << " SMs: " << many.value();
}

TEST(CudaDevice, CollectiveLaunchedAfterTheLastKernelIsExposed) {
  KAREUS_REQUIRE_CUDA_DEVICE();
  cuda::PartitionRunner runner(0);
  const auto parts = partition::representative_partitions(testing::llama3b(2, 1));
  const auto& p = parts.front();
  cuda::LaunchPlan plan =
      cuda::plan_partition(p, {p.slots.front().name, 4, MHz(0)}, runner.sm_count());
  plan.launch_index = 0;
  const Seconds overlapped = per_run(runner, plan, 50);
  plan.launch_index = static_cast<int>(plan.compute.size());
  const Seconds exposed = per_run(runner, plan, 50);
  EXPECT_GT(exposed.value(), overlapped.value());
}

TEST(CudaDevice, ExecutorMeasuresAtTheCurrentClockOnly) {
  KAREUS_REQUIRE_CUDA_DEVICE();
  CudaExecutorOptions options;
  options.protocol.cooldown = Seconds(0.0);
  options.protocol.window = Seconds(0.3);
  options.protocol.calibration_warmup = 2;
  options.protocol.calibration_iterations = 10;
  options.protocol.warmup_iterations = 2;
  const auto w = testing::llama3b(2, 1);
  CudaExecutor gpu(w.gpu, std::make_shared<nvml::Nvml>(), options);
  EXPECT_FALSE(gpu.clock().controlled());
  const MHz f = gpu.clock().current();
  EXPECT_GT(f.value(), 0);
  const auto p = partition::representative_partitions(w).front();
  const std::vector<partition::ExecConfig> configs{{p.launch_options.front().name, 2, f},
                                                   {p.launch_options.front().name, 20, f}};
  const auto m = gpu.measure(p, configs);
  ASSERT_EQ(m.size(), 2u);
  for (const auto& r : m) {
    EXPECT_GT(r.time.value(), 0);
    EXPECT_GT(r.total_energy.value(), 0);
    EXPECT_GE(r.gpu_cost.value(), options.protocol.window.value());
  }
  ASSERT_EQ(gpu.observed_clocks().size(), 2u);
  EXPECT_THROW(gpu.measure(p, {{p.launch_options.front().name, 2, f + MHz(15)}}), Error);
}

}  // namespace
}  // namespace kareus::executor
