#include "kareus/frontier/max_flow.hpp"

#include <algorithm>

namespace kareus::frontier {

void MinCutSolver::reset(int nodes) {
  head_.assign(nodes, -1);
  next_.clear();
  to_.clear();
  cap_.clear();
}

int MinCutSolver::add_edge(int from, int to, std::int64_t capacity) {
  const int e = static_cast<int>(to_.size());
  to_.push_back(to);
  cap_.push_back(capacity);
  next_.push_back(head_[from]);
  head_[from] = e;
  to_.push_back(from);
  cap_.push_back(0);
  next_.push_back(head_[to]);
  head_[to] = e + 1;
  return e;
}

bool MinCutSolver::build_levels(int source, int sink) {
  level_.assign(head_.size(), -1);
  queue_.clear();
  level_[source] = 0;
  queue_.push_back(source);
  for (std::size_t i = 0; i < queue_.size(); ++i) {
    const int u = queue_[i];
    // Nodes at or beyond the sink's level cannot be on a shortest augmenting path.
    if (level_[sink] >= 0 && level_[u] >= level_[sink]) break;
    for (int e = head_[u]; e >= 0; e = next_[e]) {
      if (cap_[e] > 0 && level_[to_[e]] < 0) {
        level_[to_[e]] = level_[u] + 1;
        queue_.push_back(to_[e]);
      }
    }
  }
  return level_[sink] >= 0;
}

// One blocking flow of the level graph by depth-first search with an explicit path, not recursion:
// a path can be as long as the critical DAG (hundreds of thousands of instructions).
std::int64_t MinCutSolver::blocking_flow(int source, int sink) {
  std::int64_t total = 0;
  path_.clear();
  int node = source;
  while (true) {
    if (node == sink) {
      std::int64_t bottleneck = kInfiniteCapacity;
      for (int e : path_) bottleneck = std::min(bottleneck, cap_[e]);
      for (int e : path_) {
        cap_[e] -= bottleneck;
        cap_[e ^ 1] += bottleneck;
      }
      total += bottleneck;
      // Resume from the tail of the first edge the augmentation saturated.
      std::size_t keep = 0;
      while (keep < path_.size() && cap_[path_[keep]] > 0) ++keep;
      path_.resize(keep);
      node = path_.empty() ? source : to_[path_.back()];
      continue;
    }
    int& e = cursor_[node];
    while (e >= 0 && (cap_[e] <= 0 || level_[to_[e]] != level_[node] + 1)) e = next_[e];
    if (e >= 0) {
      path_.push_back(e);
      node = to_[e];
      continue;
    }
    if (node == source) return total;
    // A dead end: nothing more passes `node` in this phase, so no edge may lead to it again.
    level_[node] = -1;
    path_.pop_back();
    node = path_.empty() ? source : to_[path_.back()];
  }
}

std::int64_t MinCutSolver::max_flow(int source, int sink) {
  std::int64_t total = 0;
  while (build_levels(source, sink)) {
    cursor_ = head_;
    total += blocking_flow(source, sink);
  }
  return total;
}

std::optional<std::vector<char>> MinCutSolver::min_cut(int nodes,
                                                       const std::vector<BoundedEdge>& edges,
                                                       int source, int sink,
                                                       std::vector<std::int64_t>* flow) {
  // Lower bounds are removed the textbook way: send a flow within the bounds on every edge up
  // front (`lower`, or the warm start), let a super source/sink (nodes, nodes + 1) restore
  // conservation, and close the circulation with sink -> source. If the super edges saturate, the
  // flow is feasible; the s-t max flow then continues from it on the residual network without the
  // helper edges. Edge i of `edges` is residual edge 2i, its reverse (flow above `lower`) 2i + 1.
  reset(nodes + 2);
  const int super_source = nodes;
  const int super_sink = nodes + 1;
  std::vector<std::int64_t> excess(nodes, 0);
  for (std::size_t i = 0; i < edges.size(); ++i) {
    const auto& e = edges[i];
    const std::int64_t start = flow ? std::clamp((*flow)[i], e.lower, e.upper) : e.lower;
    const int r =
        add_edge(e.from, e.to, e.upper >= kInfiniteCapacity ? kInfiniteCapacity : e.upper - start);
    cap_[r + 1] = start - e.lower;
    excess[e.to] += start;
    excess[e.from] -= start;
  }
  const int helper_begin = static_cast<int>(to_.size());
  std::int64_t required = 0;
  for (int v = 0; v < nodes; ++v) {
    if (excess[v] > 0) {
      add_edge(super_source, v, excess[v]);
      required += excess[v];
    } else if (excess[v] < 0) {
      add_edge(v, super_sink, -excess[v]);
    }
  }
  add_edge(sink, source, kInfiniteCapacity);
  if (max_flow(super_source, super_sink) != required) return std::nullopt;
  for (int e = helper_begin; e < static_cast<int>(to_.size()); ++e) cap_[e] = 0;
  max_flow(source, sink);
  if (flow) {
    flow->resize(edges.size());
    for (std::size_t i = 0; i < edges.size(); ++i) (*flow)[i] = edges[i].lower + cap_[2 * i + 1];
  }
  build_levels(source, sink);
  std::vector<char> source_side(nodes);
  for (int v = 0; v < nodes; ++v) source_side[v] = level_[v] >= 0 ? 1 : 0;
  return source_side;
}

}  // namespace kareus::frontier
