// SPDX-License-Identifier: Apache-2.0
// The hooks `kareus plan` and `kareus search` use to run under mpirun/srun: rank 0 plans as one
// process would, its measurements spread over the ranks; the other ranks only measure.
#pragma once

#include <cstddef>

#include "kareus/planner/planner.hpp"
#include "kareus/scaleout/session.hpp"

namespace kareus::cli {

// The planner's executors for workload `index` on the coordinator: the default executor of
// `options`, each batch spread over the ranks; what a dying job holds is committed to
// options.store.
planner::ExecutorFactory plan_executors(const scaleout::Session& mpi, std::size_t index,
                                        const planner::PlanOptions& options);

// A worker's executors: the same default executor the coordinator builds from seed and noise.
scaleout::ExecutorFactory worker_executors(std::uint64_t seed, double noise_sigma);

}  // namespace kareus::cli
