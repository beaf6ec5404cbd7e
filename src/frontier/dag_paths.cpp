#include "kareus/frontier/dag_paths.hpp"

namespace kareus::frontier {

DagPaths::DagPaths(const workload::PipelineDag& dag) : order(dag.topological_order()) {
  const int n = static_cast<int>(dag.nodes.size());
  position.resize(n);
  for (int p = 0; p < n; ++p) position[order[p]] = p;
  succ_begin.assign(n + 1, 0);
  pred_begin.assign(n + 1, 0);
  for (const auto& [from, to] : dag.edges) {
    ++succ_begin[from + 1];
    ++pred_begin[to + 1];
  }
  for (int v = 0; v < n; ++v) {
    succ_begin[v + 1] += succ_begin[v];
    pred_begin[v + 1] += pred_begin[v];
  }
  succ.resize(dag.edges.size());
  pred.resize(dag.edges.size());
  succ_cross.resize(dag.edges.size());
  pred_cross.resize(dag.edges.size());
  pred_edge.resize(dag.edges.size());
  auto s_fill = succ_begin;
  auto p_fill = pred_begin;
  for (const auto& [from, to] : dag.edges) {
    const char cross = dag.nodes[from].stage != dag.nodes[to].stage;
    succ_cross[s_fill[from]] = cross;
    pred_cross[p_fill[to]] = cross;
    pred_edge[p_fill[to]] = s_fill[from];
    succ[s_fill[from]++] = to;
    pred[p_fill[to]++] = from;
  }
  for (int v = 0; v < n; ++v)
    if (succ_begin[v] == succ_begin[v + 1]) leaves.push_back(v);
}

}  // namespace kareus::frontier
