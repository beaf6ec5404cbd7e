// SPDX-License-Identifier: Apache-2.0
// What a plan composed from noisy readings delivers. The planner composes instruction options from
// the readings a search took, so under measurement noise it picks the configurations whose
// readings were lucky; the frontier it reports is then optimistic. The realised frontier values
// every point's plan with each chosen configuration at its true (noise-free) reading, through the
// same composition: what the plan would really take, in the terms every frontier is scored in.
// With noise-free readings it is the frontier itself.
#pragma once

#include <vector>

#include "kareus/planner/planner.hpp"

namespace kareus::planner {

// `keys` with every reading replaced by the noise-free emulator's value of the same configuration
// (and no noise estimated).
KeyFrontiers true_readings(const workload::Workload& w, KeyFrontiers keys);

// The true (time, energy) of every frontier point's plan of a Kareus method, Pareto-pruned, by
// increasing time; each point keeps its plan index. Instruction clock granularity only: throws
// kareus::Error for a plan with options that change clock between steps.
std::vector<IterationPoint> realised_frontier(const workload::Workload& w, const MethodResult& m);

}  // namespace kareus::planner
