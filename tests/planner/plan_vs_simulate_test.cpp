// SPDX-License-Identifier: Apache-2.0
// Planned and simulated iterations agree: the planner puts every P2P transfer between stages on
// the pipeline DAG, as `kareus simulate` does, so a plan's time is what the emulator runs.
#include <gtest/gtest.h>

#include "common/workloads.hpp"
#include "kareus/core/paths.hpp"
#include "kareus/executor/iteration.hpp"
#include "kareus/planner/planner.hpp"

namespace kareus::planner {
namespace {

// Llama-3.3-70B PP10 x TP8 (the paper's large-scale shape, nine stage boundaries) with fewer
// microbatches, so that the plan is quick.
workload::Workload llama70b(int microbatches) {
  auto request = workload::read_workload_request(
      (data_dir() / "workloads" / "llama3.3-70b_pp10_tp8_dp1.json").string());
  request.parallelism.microbatches = microbatches;
  return workload::make_workload(request);
}

void expect_agreement(const workload::Workload& w) {
  PlanOptions o;
  o.methods = {Method::kMegatron, Method::kPerseus};
  o.unit_time = milliseconds(1);
  const auto r = plan(w, o);
  const emulator::Emulator emu(w.gpu);
  // Megatron: every instruction under the default power governor.
  emulator::IterationOptions governed;
  governed.clock = emulator::ClockPolicy::governor(w.gpu.power_limit_default);
  const auto megatron = emulator::simulate_iteration(w, emu, governed);
  ASSERT_GT(megatron.pipeline_transfer_time.value(), 0.0);
  const auto& planned = r.methods.at(Method::kMegatron).fastest();
  EXPECT_NEAR(planned.time.value(), megatron.iteration_time.value(),
              0.01 * megatron.iteration_time.value());
  EXPECT_NEAR(planned.energy.value(), megatron.total_energy().value(),
              0.01 * megatron.total_energy().value());
  // Perseus's fastest plan runs the critical path at the maximum clock: the simulated iteration
  // with every instruction there.
  const auto fastest = emulator::simulate_iteration(w, emu, {});
  EXPECT_NEAR(r.methods.at(Method::kPerseus).fastest().time.value(), fastest.iteration_time.value(),
              0.01 * fastest.iteration_time.value());
}

TEST(PlanVsSimulate, IterationsAgreeWithTransfersOnTheDag) {
  expect_agreement(kareus::testing::llama3b(8, 1));
  expect_agreement(llama70b(16));
}

}  // namespace
}  // namespace kareus::planner
