// SPDX-License-Identifier: Apache-2.0
// The library call the planner makes per partition key: search one partition's configuration
// space on an executor, through the measurement store when one is given, and return every
// measured point with its configuration and the Pareto frontiers.
#pragma once

#include <string>
#include <vector>

#include "kareus/executor/executor.hpp"
#include "kareus/partition/config_space.hpp"
#include "kareus/search/search.hpp"
#include "kareus/store/store.hpp"
#include "kareus/workload/workload.hpp"

namespace kareus::store {

struct PartitionSearchOptions {
  search::SearchOptions search;  // strategy (default kareus), seed, budget, progress callback
  // Reuse and record measurements here; nullptr measures everything afresh.
  Store* store = nullptr;
};

// One measured configuration, per GPU and per partition run.
struct PartitionPoint {
  std::size_t id = 0;  // in the partition's ConfigSpace
  partition::ExecConfig config;
  Seconds time;
  Joules total_energy;
  Joules dynamic_energy;
  bool reused = false;  // answered by the store
  // Readings averaged into time and energies (the search repeats a reading under noise).
  std::size_t samples = 1;
};

struct PartitionSearchResult {
  std::string partition_key;
  partition::ConfigSpace space;
  // Every measured configuration, in measurement order. Composition per clock (Kareus §4.4) needs
  // points that are off the global frontier, so all of them are returned.
  std::vector<PartitionPoint> measured;
  // Pareto sets of `measured` by increasing time: (time, total energy) and (time, dynamic energy).
  std::vector<PartitionPoint> frontier;
  std::vector<PartitionPoint> frontier_dynamic;
  search::SearchSummary summary;
  // GPU-hours the store's answers cost when they were measured: what this search would cost on
  // its own, less summary.gpu_hours.
  double reused_gpu_hours = 0;
};

// The store scope of a partition: GPU, executor, the workload's partition shape (model, TP, CP,
// microbatch size, sequence length: what a partition's kernels depend on) and the key.
Scope scope_of(const workload::Workload& w, const executor::Executor& executor,
               const std::string& partition_key);

// Searches partition `p` of workload `w`. Throws kareus::Error when the partition has nothing to
// search or the options are invalid (e.g. a zero budget).
PartitionSearchResult search_partition(const workload::Workload& w, const partition::Partition& p,
                                       executor::Executor& executor,
                                       const PartitionSearchOptions& options);

// Finds the representative partition of `key` in `w`; throws kareus::Error listing the keys of
// the workload when there is none.
partition::Partition find_partition(const workload::Workload& w, const std::string& key);

}  // namespace kareus::store
