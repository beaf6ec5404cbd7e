// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdlib>

#include "kareus/planner/planner.hpp"
#include "kareus/scaleout/session.hpp"
#include "kareus/workload/workload.hpp"

namespace kareus::scaleout {
namespace {

// Without a launcher a session is one rank that touches no MPI, and the search keeps measuring
// on its own executor object: the single-process path is unchanged.
TEST(Session, OneProcessIsACoordinatorThatKeepsItsOwnExecutor) {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS", "PMIX_RANK"})
    ::unsetenv(name);
  const Session session;
  EXPECT_EQ(session.size(), 1);
  EXPECT_TRUE(session.coordinator());
  workload::WorkloadRequest r;
  r.model = "llama3.2-3b";
  r.gpu = "a100-sxm4-40gb";
  r.parallelism.tp = 8;
  const workload::Workload w = workload::make_workload(r);
  auto local = planner::default_executor(w, planner::PlanOptions{});
  const executor::Executor* raw = local.get();
  EXPECT_EQ(session.executor(0, std::move(local)).get(), raw);
}

}  // namespace
}  // namespace kareus::scaleout
