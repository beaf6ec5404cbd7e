// Minimum s-t cut of a flow network whose edges have lower and upper bounds, as the
// Phillips-Dessouky step of the pipeline solver needs it (lower bound = what lengthening an
// instruction saves, upper = what shortening it costs). Dinic's algorithm on integer capacities,
// written for the solver rather than taken from Boost Graph: Boost's max-flow has no lower bounds,
// and the solver rebuilds a network of a few thousand edges thousands of times, so it reuses this
// object's arrays instead of allocating an adjacency_list and property maps per step. Integer
// capacities keep the cut exact.
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

 private:
  void reset(int nodes);
  int add_edge(int from, int to, std::int64_t capacity);
  std::int64_t max_flow(int source, int sink);
  bool build_levels(int source, int sink);
  std::int64_t blocking_flow(int source, int sink);

  // Edge e and its reverse e ^ 1; residual capacity in cap_.
  std::vector<int> head_, next_, to_, level_, cursor_, queue_, path_;
  std::vector<std::int64_t> cap_;
};

}  // namespace kareus::frontier
