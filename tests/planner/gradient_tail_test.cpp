// SPDX-License-Identifier: Apache-2.0
// The data-parallel gradient reduction after the pipeline drains: every stage reduces its own
// gradients at once, so the iteration waits for the slowest stage and every GPU pays its share.
#include <gtest/gtest.h>

#include <algorithm>

#include "kareus/executor/emulator.hpp"
#include "kareus/planner/planner.hpp"
#include "kareus/workload/kernels.hpp"

namespace kareus::planner {
namespace {

workload::Workload llama3b_dp(int dp) {
  workload::WorkloadRequest r;
  r.model = "llama3.2-3b";
  r.gpu = "a100-sxm4-40gb";
  r.parallelism.tp = 8;
  r.parallelism.pp = 2;
  r.parallelism.dp = dp;
  r.parallelism.microbatch_size = 8;
  r.parallelism.sequence_length = 4096;
  r.parallelism.microbatches = 8;
  r.parallelism.recompute = workload::Recompute::kFull;
  return workload::make_workload(r);
}

TEST(GradientTail, SlowestStageSetsTheTimeAndEveryReplicaPaysTheEnergy) {
  PlanOptions options;
  options.methods = {Method::kMegatron};
  const IterationPoint one = plan(llama3b_dp(1), options).methods.at(Method::kMegatron).fastest();
  const workload::Workload w = llama3b_dp(2);
  const IterationPoint two = plan(w, options).methods.at(Method::kMegatron).fastest();
  // Each replica's pipeline is the same as without data parallelism; the difference is the
  // reduction of each stage, on the emulator at the maximum clock.
  const emulator::Emulator emu(w.gpu);
  Seconds slowest(0);
  Joules dynamic(0);
  for (int s = 0; s < w.parallelism.pp; ++s) {
    const auto r = emu.run_kernel(workload::gradient_reduction(w, s),
                                  emulator::ClockPolicy::locked_at(w.gpu.clock_max));
    slowest = std::max(slowest, r.time);
    dynamic += r.dynamic_energy * static_cast<double>(w.gpus_per_stage() * w.parallelism.dp);
  }
  ASSERT_GT(slowest.value(), 0.0);
  EXPECT_NEAR((two.time - one.time).value(), slowest.value(), 1e-9);
  EXPECT_NEAR((two.dynamic_energy - 2.0 * one.dynamic_energy).value(), dynamic.value(),
              1e-6 * dynamic.value());
}

}  // namespace
}  // namespace kareus::planner
