// SPDX-License-Identifier: Apache-2.0
// Every partition key of a workload searched on the emulator with one strategy: the input the
// composition and partition-clock tests build instruction options from.
#pragma once

#include "kareus/executor/executor.hpp"
#include "kareus/partition/partition.hpp"
#include "kareus/planner/composition.hpp"
#include "kareus/store/partition_search.hpp"

namespace kareus::testing {

inline planner::KeyFrontiers searched_keys(const workload::Workload& w, search::Strategy strategy) {
  executor::EmulatorExecutor exec{emulator::Emulator(w.gpu)};
  store::PartitionSearchOptions so;
  so.search.strategy = strategy;
  planner::KeyFrontiers keys;
  for (const auto& p : partition::representative_partitions(w))
    keys.emplace(p.key, store::search_partition(w, p, exec, so));
  return keys;
}

}  // namespace kareus::testing
