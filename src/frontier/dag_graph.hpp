// SPDX-License-Identifier: Apache-2.0
// The pipeline DAG as the solver's passes walk it: compressed forward and backward adjacency with a
// topological order, and the longest path over it. Shared by the solver and the critical subgraph
// it keeps between steps (critical_subgraph.hpp).
#pragma once

#include <algorithm>
#include <vector>

#include "kareus/workload/pipeline.hpp"

namespace kareus::frontier {

// Forward/backward adjacency of the DAG in compressed rows, with a topological order; an edge
// between stages (`*_cross`) carries the problem's transfer delay. Each instruction's edges keep
// the order of the DAG's edge list.
struct Graph {
  std::vector<int> order;
  std::vector<int> leaves;  // the instructions without successors
  std::vector<int> succ_begin, succ, pred_begin, pred;
  std::vector<char> succ_cross, pred_cross;
  std::vector<int> pred_edge;  // per predecessor entry, the same edge's successor index

  // The DAG with its instructions' own numbers.
  explicit Graph(const workload::PipelineDag& dag) : Graph(dag, dag.topological_order(), false) {}

  // The DAG with instruction topological[k] numbered k, for a topological order `topological`:
  // the order is then 0, 1, 2, ...
  static Graph numbered_by_rank(const workload::PipelineDag& dag,
                                const std::vector<int>& topological) {
    return Graph(dag, topological, true);
  }

  // Longest path: finish[v] = start[v] + duration[v], start = latest finish of the predecessors
  // (plus `transfer` from another stage). `finish` is the caller's scratch: with it each duration
  // is looked up once, not once per edge (the solver's hot passes call this at every step). The
  // makespan is the latest finish of a leaf: with no negative duration or transfer, every other
  // instruction finishes no later than its successors. Only the instructions from position
  // `from` of the order on are computed: the caller knows the earlier ones' durations unchanged
  // since `start` and `finish` last held their values (a step moves no instruction before its
  // first moved one, about halfway down the order).
  template <class T, class Duration>
  T earliest_starts(const Duration& duration, T transfer, std::vector<T>& start,
                    std::vector<T>& finish, int from = 0) const {
    for (auto it = order.begin() + from; it != order.end(); ++it) {
      const int v = *it;
      T s{};
      for (int i = pred_begin[v]; i < pred_begin[v + 1]; ++i)
        s = std::max(s, finish[pred[i]] + (pred_cross[i] ? transfer : T{}));
      start[v] = s;
      finish[v] = s + duration(v);
    }
    T makespan{};
    for (int v : leaves) makespan = std::max(makespan, finish[v]);
    return makespan;
  }
  template <class T, class Duration>
  T earliest_starts(const Duration& duration, T transfer, std::vector<T>& start) const {
    std::vector<T> finish(start.size());
    return earliest_starts(duration, transfer, start, finish);
  }

 private:
  Graph(const workload::PipelineDag& dag, const std::vector<int>& topological, bool by_rank) {
    const int n = static_cast<int>(dag.nodes.size());
    std::vector<int> number(n);  // each DAG node's number here
    for (int k = 0; k < n; ++k) number[by_rank ? topological[k] : k] = k;
    order.resize(n);
    for (int k = 0; k < n; ++k) order[k] = number[topological[k]];
    succ_begin.assign(n + 1, 0);
    pred_begin.assign(n + 1, 0);
    for (const auto& [from, to] : dag.edges) {
      ++succ_begin[number[from] + 1];
      ++pred_begin[number[to] + 1];
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
    for (const auto& [dag_from, dag_to] : dag.edges) {
      const char cross = dag.nodes[dag_from].stage != dag.nodes[dag_to].stage;
      const int from = number[dag_from], to = number[dag_to];
      succ_cross[s_fill[from]] = cross;
      pred_cross[p_fill[to]] = cross;
      pred_edge[p_fill[to]] = s_fill[from];
      succ[s_fill[from]++] = to;
      pred[p_fill[to]++] = from;
    }
    for (int v = 0; v < n; ++v)
      if (succ_begin[v] == succ_begin[v + 1]) leaves.push_back(v);
  }
};

}  // namespace kareus::frontier
