// SPDX-License-Identifier: Apache-2.0
#include "critical_subgraph.hpp"

#include <algorithm>
#include <utility>

namespace kareus::frontier {

CriticalSubgraph::CriticalSubgraph(const Graph& graph, std::vector<std::int64_t> fastest)
    : graph_(graph), fastest_(std::move(fastest)) {
  const int n = static_cast<int>(graph.order.size());
  for (int v = 0; v < n; ++v)
    if (graph.pred_begin[v] == graph.pred_begin[v + 1]) roots_.push_back(v);
  units_seen_.assign(n, -1);
  tight_.assign(graph.succ.size(), 2);
  critical_.assign(n, 0);
  stuck_.assign(n, 0);
  queued_.assign(n, 0);
}

void CriticalSubgraph::enqueue(int v) {
  if (queued_[v]) return;
  queued_[v] = 1;
  queue_.push(v);
}

bool CriticalSubgraph::recompute(int v, const std::vector<std::int64_t>& units,
                                 const std::vector<std::int64_t>& finish, std::int64_t makespan) {
  const bool ends = finish[v] == makespan;
  bool critical = ends, stuck = ends;
  for (int i = graph_.succ_begin[v]; i < graph_.succ_begin[v + 1]; ++i) {
    const int w = graph_.succ[i];
    if (!tight_[i] || !critical_[w]) continue;
    critical = true;
    stuck = stuck || stuck_[w];
  }
  stuck = stuck && critical && units[v] == fastest_[v];
  if (critical == static_cast<bool>(critical_[v]) && stuck == static_cast<bool>(stuck_[v]))
    return false;
  if (critical != static_cast<bool>(critical_[v])) {
    count_ += critical ? 1 : -1;
    // The network's bounds of v's arc and of every edge at v depend on it.
    changes_.push_back(Change{v, -1});
    for (int i = graph_.succ_begin[v]; i < graph_.succ_begin[v + 1]; ++i)
      changes_.push_back(Change{v, i});
    for (int p = graph_.pred_begin[v]; p < graph_.pred_begin[v + 1]; ++p)
      changes_.push_back(Change{graph_.pred[p], graph_.pred_edge[p]});
  }
  critical_[v] = critical;
  stuck_[v] = stuck;
  return true;
}

void CriticalSubgraph::update(const std::vector<std::int64_t>& units,
                              const std::vector<std::int64_t>& start,
                              const std::vector<std::int64_t>& finish, std::int64_t transfer,
                              std::int64_t makespan, int from) {
  const int n = static_cast<int>(graph_.order.size());
  if (first_) from = 0;
  first_ = false;
  changes_.clear();
  // Only an edge into an instruction from `from` on can have changed its tightness.
  for (int w = from; w < n; ++w) {
    if (units[w] != units_seen_[w]) {
      units_seen_[w] = units[w];
      changes_.push_back(Change{w, -1});
      enqueue(w);
    }
    for (int p = graph_.pred_begin[w]; p < graph_.pred_begin[w + 1]; ++p) {
      const int u = graph_.pred[p], i = graph_.pred_edge[p];
      const char tight = finish[u] + (graph_.pred_cross[p] ? transfer : 0) == start[w];
      if (tight == tight_[i]) continue;
      tight_[i] = tight;
      changes_.push_back(Change{u, i});
      enqueue(u);
    }
  }
  for (int v : graph_.leaves) {
    changes_.push_back(Change{v, -1});
    enqueue(v);
  }
  while (!queue_.empty()) {
    const int v = queue_.top();
    queue_.pop();
    queued_[v] = 0;
    if (!recompute(v, units, finish, makespan)) continue;
    for (int p = graph_.pred_begin[v]; p < graph_.pred_begin[v + 1]; ++p)
      if (tight_[graph_.pred_edge[p]]) enqueue(graph_.pred[p]);
  }
  cannot_shorten_ = std::any_of(roots_.begin(), roots_.end(), [&](int v) { return stuck_[v]; });
  std::sort(changes_.begin(), changes_.end(), [](const Change& a, const Change& b) {
    return a.instruction != b.instruction ? a.instruction < b.instruction : a.edge < b.edge;
  });
  changes_.erase(std::unique(changes_.begin(), changes_.end(),
                             [](const Change& a, const Change& b) {
                               return a.instruction == b.instruction && a.edge == b.edge;
                             }),
                 changes_.end());
}

}  // namespace kareus::frontier
