// SPDX-License-Identifier: Apache-2.0
#include "scaleout_cli.hpp"

#include "kareus/scaleout/store_sink.hpp"

namespace kareus::cli {

planner::ExecutorFactory plan_executors(const scaleout::Session& mpi, std::size_t index,
                                        const planner::PlanOptions& options) {
  planner::PlanOptions local = options;
  local.make_executor = {};
  return [&mpi, index, local](const workload::Workload& w) {
    return mpi.executor(
        index, planner::default_executor(w, local),
        local.store ? scaleout::commit_to(*local.store, w) : scaleout::MeasuredSink{});
  };
}

scaleout::ExecutorFactory worker_executors(std::uint64_t seed, double noise_sigma) {
  planner::PlanOptions options;
  options.seed = seed;
  options.noise_sigma = noise_sigma;
  return [options](const workload::Workload& w) { return planner::default_executor(w, options); };
}

}  // namespace kareus::cli
