// SPDX-License-Identifier: Apache-2.0
// Where a plan's energy and time go: every frontier point replayed on the noise-free emulator,
// each pipeline instruction as its chosen option runs it, with the work outside the instructions
// and the waits the 1F1B schedule leaves (emulator::JobLedger). Two plans' ledgers side by side
// say why one costs less than the other.
#pragma once

#include <vector>

#include "kareus/executor/iteration.hpp"
#include "kareus/planner/partition_clocks.hpp"
#include "kareus/planner/planner.hpp"

namespace kareus::planner {

// One ledger per point of m.frontier, in its order. Options with partition clocks charge their
// switches as `clocks` says.
std::vector<emulator::JobLedger> frontier_ledgers(const workload::Workload& w,
                                                  const MethodResult& m,
                                                  const PartitionClockOptions& clocks = {});

}  // namespace kareus::planner
