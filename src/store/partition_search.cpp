// SPDX-License-Identifier: Apache-2.0
#include "kareus/store/partition_search.hpp"

#include <fmt/format.h>

#include <optional>

#include "kareus/core/error.hpp"
#include "kareus/search/partition_problem.hpp"
#include "kareus/store/stored_problem.hpp"

namespace kareus::store {

Scope scope_of(const workload::Workload& w, const executor::Executor& executor,
               const std::string& partition_key) {
  const auto& p = w.parallelism;
  return {executor.gpu().name, executor.name(),
          fmt::format("{}/tp{}/cp{}/mbs{}/seq{}", w.model.name, p.tp, p.cp, p.microbatch_size,
                      p.sequence_length),
          partition_key};
}

partition::Partition find_partition(const workload::Workload& w, const std::string& key) {
  std::string known;
  for (const partition::Partition& p : partition::representative_partitions(w)) {
    if (p.key == key) return p;
    known += (known.empty() ? "" : ", ") + p.key;
  }
  throw Error::invalid("workload " + w.model.name, "partition", key, "one of: " + known);
}

PartitionSearchResult search_partition(const workload::Workload& w, const partition::Partition& p,
                                       executor::Executor& executor,
                                       const PartitionSearchOptions& options) {
  search::PartitionProblem problem(p, executor);
  std::optional<StoredProblem> stored;
  if (options.store) stored.emplace(problem, *options.store, scope_of(w, executor, p.key));
  search::Problem& target = stored ? static_cast<search::Problem&>(*stored) : problem;
  const search::SearchResult r = search::run_search(target, options.search);

  PartitionSearchResult out{p.key,     problem.space(),           {}, {}, {},
                            r.summary, r.summary.gpu_hours_reused};
  std::vector<std::size_t> position(problem.size(), 0);
  for (const search::MeasuredPoint& m : r.measured) {
    position[m.id] = out.measured.size();
    out.measured.push_back({m.id, problem.space().at(m.id), m.measurement.time,
                            m.measurement.total_energy, m.measurement.dynamic_energy,
                            m.measurement.reused, m.samples});
  }
  for (std::size_t id : r.frontier_total) out.frontier.push_back(out.measured[position[id]]);
  for (std::size_t id : r.frontier_dynamic) {
    out.frontier_dynamic.push_back(out.measured[position[id]]);
  }
  return out;
}

}  // namespace kareus::store
