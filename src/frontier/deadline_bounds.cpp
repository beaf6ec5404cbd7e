// SPDX-License-Identifier: Apache-2.0
#include "deadline_bounds.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

namespace kareus::frontier {

std::vector<int> candidate_options(const std::vector<ExecutionOption>& set, Watts p_blocking,
                                   bool convexify) {
  const auto cost = [&](int i) { return (set[i].energy - p_blocking * set[i].time).value(); };
  const auto time = [&](int i) { return set[i].time.value(); };
  std::vector<int> order(set.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return time(a) != time(b) ? time(a) < time(b) : cost(a) < cost(b);
  });
  std::vector<int> kept;
  for (int i : order) {
    if (!kept.empty() && cost(kept.back()) <= cost(i)) continue;
    if (convexify) {
      while (kept.size() >= 2) {
        const int o = kept[kept.size() - 2], a = kept.back();
        if ((time(a) - time(o)) * (cost(i) - cost(o)) - (cost(a) - cost(o)) * (time(i) - time(o)) >
            0)
          break;
        kept.pop_back();
      }
    }
    kept.push_back(i);
  }
  return kept;
}

std::vector<double> outside_paths(const PipelineProblem& problem,
                                  const std::vector<double>& fastest) {
  const auto& dag = problem.dag;
  const int n = static_cast<int>(dag.nodes.size());
  std::vector<double> head(n, 0.0), tail(n, 0.0);
  std::vector<std::vector<std::pair<int, double>>> preds(n), succs(n);
  for (const auto& [from, to] : dag.edges) {
    const double delay =
        dag.nodes[from].stage != dag.nodes[to].stage ? problem.transfer.value() : 0.0;
    preds[to].emplace_back(from, delay);
    succs[from].emplace_back(to, delay);
  }
  const auto order = dag.topological_order();
  for (int v : order)
    for (const auto& [u, delay] : preds[v])
      head[v] = std::max(head[v], head[u] + fastest[u] + delay);
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    for (const auto& [w, delay] : succs[*it])
      tail[*it] = std::max(tail[*it], delay + fastest[w] + tail[w]);
  std::vector<double> outside(n);
  for (int v = 0; v < n; ++v) outside[v] = head[v] + tail[v];
  return outside;
}

}  // namespace kareus::frontier
