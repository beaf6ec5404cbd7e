// SPDX-License-Identifier: Apache-2.0
// Minimum s-t cut of a flow network whose edges have lower and upper bounds, as the
// Phillips-Dessouky step of the pipeline solver needs it (lower bound = what lengthening an
// instruction saves, upper = what shortening it costs). Dinic's algorithm on integer capacities,
// written for the solver rather than taken from Boost Graph: Boost's max-flow has no lower bounds,
// and the solver changes the bounds of a few edges of one network thousands of times, each time
// solving again from the flow it has, so the network keeps its arrays, its adjacency and its flow
// between solves. Integer capacities keep the cut exact.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace kareus::frontier {

// An upper bound no finite capacity reaches; callers keep sums of finite capacities below it.
inline constexpr std::int64_t kInfiniteCapacity = std::numeric_limits<std::int64_t>::max() / 4;

struct BoundedEdge {
  int from = 0;
  int to = 0;
  std::int64_t lower = 0;
  std::int64_t upper = kInfiniteCapacity;
  bool operator==(const BoundedEdge&) const = default;
};

class MinCutSolver {
 public:
  // The source side of a minimum s-t cut (value = sum of `upper` over edges leaving it minus sum of
  // `lower` over edges entering it), marked 1 per node; nullopt when no flow meets the bounds.
  // Precondition: some cut has a finite value (no s-t path of infinite-capacity edges).
  // `flow`, when given, warm-starts the search: per edge a flow to start from (clamped into the
  // edge's bounds; a maximum flow of a slightly different network is close to one of this
  // network, so few augmentations remain), and on return a maximum flow, per edge. The source side
  // does not depend on the start: it is the set reachable in the residual network of a maximum
  // flow, the same for every maximum flow.
  std::optional<std::vector<char>> min_cut(int nodes, const std::vector<BoundedEdge>& edges,
                                           int source, int sink,
                                           std::vector<std::int64_t>* flow = nullptr);

  // The same network kept between solves: `reset` and `add_edge` fix its nodes and edges, then
  // `set_bounds` and `solve` alternate, every solve between the same source and sink (a solve
  // forgets the old terminals' imbalance and keeps their source side for the next one). An edge
  // with bounds [0, 0] is the same as no edge.
  void reset(int nodes);
  // A new edge, with bounds [0, 0] and no flow; its index. Edges are added before the first solve.
  int add_edge(int from, int to);
  // Moves an edge's flow to `flow` clamped into its bounds.
  void set_flow(int edge, std::int64_t flow) { place(edge, this->flow(edge), flow); }
  // New bounds for an edge, its flow kept where it fits (else clamped); true when they changed.
  // Inline: the solver calls it for every edge of its network at every step.
  bool set_bounds(int edge, std::int64_t lower, std::int64_t upper) {
    if (lower_[edge] == lower && upper_[edge] == upper) return false;
    const std::int64_t current = flow(edge);
    lower_[edge] = lower;
    upper_[edge] = upper;
    place(edge, current, current);
    return true;
  }
  std::int64_t flow(int edge) const { return lower_[edge] + cap_[backward_[edge]]; }
  // Turns the current flow, from where it is, into a maximum s-t flow within the bounds; false
  // when no flow meets them (the flow is then left unbalanced).
  bool solve(int source, int sink);
  // After a successful solve: whether `node` is on the source side of the minimum cut.
  bool source_side(int node) const { return level_[node] >= 0; }
  // How many solves found the cut by extending the previous one's source side (extend_reach)
  // instead of searching the network again.
  std::int64_t reaches_extended() const { return reaches_extended_; }

 private:
  // Sets an edge whose flow was `old` to `flow` clamped into its bounds.
  void place(int edge, std::int64_t old, std::int64_t flow);
  // Notes what arc a's room, `before` until now, does to the kept reach.
  void note_room(int a, std::int64_t before);
  // When nothing is unbalanced and no arc from the last solve's source side lost its room, that
  // flow is still feasible and the side still reached; the new side is it plus what the arcs that
  // gained room reach. True, with level_ marking that side, when the sink is not in it (the flow
  // is then still maximum: the full solve would find no augmenting path and end with the same
  // side); false when it is (level_ then needs a full search).
  bool extend_reach(int sink);
  void build_adjacency();
  // Dinic's algorithm from the nodes of sources_ with budget_ > 0 (supply) to the nodes with
  // budget_ < 0 (demand), as with one super source and one super sink, without their edges.
  void route();
  // Breadth-first levels from the sources over residual edges, up to the nearest demand; true
  // when a demand is reachable. With no demand, level_ >= 0 marks every node reachable.
  bool build_levels();
  void blocking_flow(int from);
  // Sets the terminals' budgets, lists the sources and routes; the internal nodes' budgets are
  // their imbalances (inflow - outflow), which routing settles.
  void route_with_terminals(int source, std::int64_t source_budget, int sink,
                            std::int64_t sink_budget);

  // Edge i is residual arc forward_[i] (cap_ its room below `upper`) and its reverse arc
  // backward_[i] (room above `lower`); arc a ends at head_[a] and is paired with reverse_[a]. Once
  // the adjacency is built, the arcs leaving node v are a = adj_begin_[v] .. adj_begin_[v + 1] - 1,
  // in the order the edges were added: the level search and the blocking flow then read each
  // node's arcs from consecutive memory (numbered per edge, their reads missed the cache).
  int nodes_ = 0;
  bool adjacency_built_ = false;
  std::vector<int> head_, reverse_, forward_, backward_;
  std::vector<int> adj_begin_, level_, cursor_, queue_, path_, sources_;
  // The nodes whose budget set_flow may have moved since the last balanced flow, each once.
  std::vector<int> unbalanced_;
  std::vector<char> listed_;
  std::vector<std::int64_t> cap_, lower_, upper_, budget_;
  // What route() has left to move from finite supplies and to finite demands (-1: infinite).
  std::int64_t finite_supply_ = 0, finite_demand_ = 0;
  // Whether level_ still marks the last successful solve's source side (the reach), the arcs from
  // it that have gained room since (grown_), and whether one from it has lost all its room. A
  // pipeline step changes few bounds, mostly on arcs whose room stays positive or zero, so the
  // reach usually stays or grows, and a level search of the whole source side per solve (about a
  // tenth of dp1's CPU) found the same side again.
  bool reach_kept_ = false, reach_lost_ = false;
  std::vector<int> grown_;
  std::int64_t reaches_extended_ = 0;
};

}  // namespace kareus::frontier
