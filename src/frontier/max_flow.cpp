// SPDX-License-Identifier: Apache-2.0
#include "kareus/frontier/max_flow.hpp"

#include <algorithm>

namespace kareus::frontier {

void MinCutSolver::reset(int nodes) {
  nodes_ = nodes;
  adjacency_built_ = false;
  head_.clear();
  reverse_.clear();
  forward_.clear();
  backward_.clear();
  cap_.clear();
  lower_.clear();
  upper_.clear();
  budget_.assign(nodes, 0);
  listed_.assign(nodes, 0);
  unbalanced_.clear();
  reach_kept_ = false;
}

int MinCutSolver::add_edge(int from, int to) {
  const int e = static_cast<int>(lower_.size());
  const int a = static_cast<int>(head_.size());
  head_.insert(head_.end(), {to, from});
  reverse_.insert(reverse_.end(), {a + 1, a});
  forward_.push_back(a);
  backward_.push_back(a + 1);
  cap_.insert(cap_.end(), {0, 0});
  lower_.push_back(0);
  upper_.push_back(0);
  adjacency_built_ = false;
  reach_kept_ = false;
  return e;
}

void MinCutSolver::place(int edge, std::int64_t old, std::int64_t flow) {
  const std::int64_t now = std::clamp(flow, lower_[edge], upper_[edge]);
  const int forward = forward_[edge], backward = backward_[edge];
  const std::int64_t forward_before = cap_[forward], backward_before = cap_[backward];
  cap_[forward] = upper_[edge] >= kInfiniteCapacity ? kInfiniteCapacity : upper_[edge] - now;
  cap_[backward] = now - lower_[edge];
  if (reach_kept_) {
    note_room(forward, forward_before);
    note_room(backward, backward_before);
  }
  // Budgets are imbalances, inflow - outflow, which the next solve settles.
  if (now == old) return;
  budget_[head_[forward]] += now - old;
  budget_[head_[backward]] -= now - old;
  for (const int v : {head_[forward], head_[backward]}) {
    if (listed_[v]) continue;
    listed_[v] = 1;
    unbalanced_.push_back(v);
  }
}

void MinCutSolver::note_room(int a, std::int64_t before) {
  if (level_[head_[reverse_[a]]] < 0) return;  // from outside the reach: reached, if at all, later
  if (before > 0 && cap_[a] <= 0) reach_lost_ = true;
  if (before <= 0 && cap_[a] > 0 && level_[head_[a]] < 0) grown_.push_back(a);
}

bool MinCutSolver::extend_reach(int sink) {
  queue_.clear();
  for (int a : grown_) {
    if (cap_[a] <= 0 || level_[head_[a]] >= 0) continue;
    level_[head_[a]] = 0;
    queue_.push_back(head_[a]);
  }
  for (std::size_t i = 0; i < queue_.size(); ++i) {
    const int u = queue_[i];
    if (u == sink) return false;
    for (int a = adj_begin_[u]; a < adj_begin_[u + 1]; ++a) {
      const int w = head_[a];
      if (cap_[a] <= 0 || level_[w] >= 0) continue;
      level_[w] = 0;
      queue_.push_back(w);
    }
  }
  grown_.clear();
  ++reaches_extended_;
  return true;
}

// Renumbers the arcs grouped by tail, each node's in their present order (a stable counting sort),
// so that a node's arcs are consecutive; arrays indexed by arc follow them.
void MinCutSolver::build_adjacency() {
  const int arcs = static_cast<int>(head_.size());
  adj_begin_.assign(nodes_ + 1, 0);
  for (int a = 0; a < arcs; ++a) ++adj_begin_[head_[reverse_[a]] + 1];
  for (int v = 0; v < nodes_; ++v) adj_begin_[v + 1] += adj_begin_[v];
  cursor_.assign(adj_begin_.begin(), adj_begin_.end() - 1);
  std::vector<int> moved_to(arcs);
  for (int a = 0; a < arcs; ++a) moved_to[a] = cursor_[head_[reverse_[a]]]++;
  std::vector<int> head(arcs), reverse(arcs);
  std::vector<std::int64_t> cap(arcs);
  for (int a = 0; a < arcs; ++a) {
    head[moved_to[a]] = head_[a];
    reverse[moved_to[a]] = moved_to[reverse_[a]];
    cap[moved_to[a]] = cap_[a];
  }
  head_.swap(head);
  reverse_.swap(reverse);
  cap_.swap(cap);
  for (auto* arc : {&forward_, &backward_})
    for (int& a : *arc) a = moved_to[a];
  level_.resize(nodes_);
  adjacency_built_ = true;
}

bool MinCutSolver::build_levels() {
  std::fill(level_.begin(), level_.end(), -1);
  queue_.clear();
  for (int x : sources_) {
    if (budget_[x] <= 0) continue;
    level_[x] = 0;
    queue_.push_back(x);
  }
  int demand_level = -1;
  for (std::size_t i = 0; i < queue_.size(); ++i) {
    const int u = queue_[i];
    // Nodes at or beyond the nearest demand's level cannot be on a shortest augmenting path.
    if (demand_level >= 0 && level_[u] >= demand_level) break;
    for (int a = adj_begin_[u]; a < adj_begin_[u + 1]; ++a) {
      const int w = head_[a];
      if (cap_[a] <= 0 || level_[w] >= 0) continue;
      level_[w] = level_[u] + 1;
      queue_.push_back(w);
      if (budget_[w] < 0 && demand_level < 0) demand_level = level_[w];
    }
  }
  return demand_level >= 0;
}

// One blocking flow of the level graph from `from` by depth-first search with an explicit path,
// not recursion: a path can be as long as the critical DAG (hundreds of thousands of instructions).
void MinCutSolver::blocking_flow(int from) {
  path_.clear();
  int node = from;
  while (true) {
    if (budget_[node] < 0) {
      std::int64_t amount = std::min(budget_[from], -budget_[node]);
      for (int a : path_) amount = std::min(amount, cap_[a]);
      for (int a : path_) {
        cap_[a] -= amount;
        cap_[reverse_[a]] += amount;
      }
      if (budget_[from] < kInfiniteCapacity) budget_[from] -= amount;
      if (budget_[node] > -kInfiniteCapacity) budget_[node] += amount;
      if (finite_supply_ >= 0) finite_supply_ -= amount;
      if (finite_demand_ >= 0) finite_demand_ -= amount;
      if (budget_[from] == 0) return;
      // Resume from the tail of the first arc the augmentation saturated (or from the demand
      // just met, which then turns out a dead end).
      std::size_t keep = 0;
      while (keep < path_.size() && cap_[path_[keep]] > 0) ++keep;
      path_.resize(keep);
      node = path_.empty() ? from : head_[path_.back()];
      continue;
    }
    int& a = cursor_[node];
    const int end = adj_begin_[node + 1];
    while (a < end && (cap_[a] <= 0 || level_[head_[a]] != level_[node] + 1)) ++a;
    if (a < end) {
      path_.push_back(a);
      node = head_[a];
      continue;
    }
    // A dead end: nothing more passes `node` in this phase, so no arc may lead to it again.
    level_[node] = -1;
    if (node == from) return;
    path_.pop_back();
    node = path_.empty() ? from : head_[path_.back()];
  }
}

void MinCutSolver::route() {
  // Once every finite supply (or demand) is met, the rest is the infinite terminals': nothing is
  // left to route, and a last level search would cover the whole network for nothing.
  while (finite_supply_ != 0 && finite_demand_ != 0 && build_levels()) {
    std::copy(adj_begin_.begin(), adj_begin_.end() - 1, cursor_.begin());
    for (int x : sources_)
      if (level_[x] == 0 && budget_[x] > 0) blocking_flow(x);
  }
}

void MinCutSolver::route_with_terminals(int source, std::int64_t source_budget, int sink,
                                        std::int64_t sink_budget) {
  budget_[source] = source_budget;
  budget_[sink] = sink_budget;
  sources_.clear();
  for (int t : {source, sink})
    if (budget_[t] > 0) sources_.push_back(t);
  // A side with an infinite budget counts as never met (-1).
  finite_supply_ = source_budget > 0 || sink_budget > 0 ? -1 : 0;
  finite_demand_ = source_budget < 0 || sink_budget < 0 ? -1 : 0;
  for (int v : unbalanced_) {
    if (v == source || v == sink) continue;
    if (budget_[v] > 0) sources_.push_back(v);
    if (budget_[v] > 0 && finite_supply_ >= 0) finite_supply_ += budget_[v];
    if (budget_[v] < 0 && finite_demand_ >= 0) finite_demand_ -= budget_[v];
  }
  route();
}

bool MinCutSolver::solve(int source, int sink) {
  if (!adjacency_built_) build_adjacency();
  if (reach_kept_ && !reach_lost_ && unbalanced_.empty() && extend_reach(sink)) return true;
  reach_kept_ = false;
  // Lower bounds the textbook way, without its helper edges: the flow at hand meets every bound
  // (set_flow clamps), and a feasible flow is one that also balances every node but the two
  // terminals, which may give or take any amount. Routing each surplus to a shortage or a
  // terminal, then each remaining shortage from a terminal, finds one whenever one exists (the
  // difference to any feasible flow decomposes into such paths). The s-t maximum flow then
  // continues from it.
  const auto unbalanced = [&](auto sign) {
    return std::any_of(unbalanced_.begin(), unbalanced_.end(),
                       [&](int v) { return v != source && v != sink && sign(budget_[v]); });
  };
  route_with_terminals(source, -kInfiniteCapacity, sink, -kInfiniteCapacity);
  if (unbalanced([](std::int64_t b) { return b > 0; })) return false;
  route_with_terminals(source, kInfiniteCapacity, sink, kInfiniteCapacity);
  if (unbalanced([](std::int64_t b) { return b < 0; })) return false;
  for (int v : unbalanced_) listed_[v] = 0;
  unbalanced_.clear();
  // Its last level search found no path to the sink: level_ marks the residual reach of the
  // source, the source side of the minimum cut.
  route_with_terminals(source, kInfiniteCapacity, sink, -kInfiniteCapacity);
  budget_[source] = 0;
  budget_[sink] = 0;
  reach_kept_ = true;
  reach_lost_ = false;
  grown_.clear();
  return true;
}

std::optional<std::vector<char>> MinCutSolver::min_cut(int nodes,
                                                       const std::vector<BoundedEdge>& edges,
                                                       int source, int sink,
                                                       std::vector<std::int64_t>* flow) {
  reset(nodes);
  for (const auto& e : edges) add_edge(e.from, e.to);
  for (std::size_t i = 0; i < edges.size(); ++i) {
    const int e = static_cast<int>(i);
    set_bounds(e, edges[i].lower, edges[i].upper);
    if (flow) set_flow(e, (*flow)[i]);
  }
  if (!solve(source, sink)) return std::nullopt;
  if (flow) {
    flow->resize(edges.size());
    for (std::size_t i = 0; i < edges.size(); ++i) (*flow)[i] = this->flow(static_cast<int>(i));
  }
  std::vector<char> side(nodes);
  for (int v = 0; v < nodes; ++v) side[v] = source_side(v) ? 1 : 0;
  return side;
}

}  // namespace kareus::frontier
