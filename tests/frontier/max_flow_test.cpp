// SPDX-License-Identifier: Apache-2.0
#include "kareus/frontier/max_flow.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "kareus/core/rng.hpp"

namespace kareus::frontier {
namespace {

std::int64_t cut_value(const std::vector<BoundedEdge>& edges, const std::vector<char>& side) {
  std::int64_t value = 0;
  for (const auto& e : edges) {
    if (side[e.from] && !side[e.to] && e.upper == kInfiniteCapacity) return kInfiniteCapacity;
    if (side[e.from] && !side[e.to]) value += e.upper;
    if (!side[e.from] && side[e.to]) value -= e.lower;
  }
  return value;
}

// Whether infinite-capacity edges alone lead from node 0 to node n - 1 (edges go up in number).
bool has_infinite_path(const std::vector<BoundedEdge>& edges, int n) {
  std::vector<char> reach(n, 0);
  reach[0] = 1;
  for (int u = 0; u < n; ++u)
    for (const auto& e : edges)
      if (e.from == u && reach[u] && e.upper == kInfiniteCapacity) reach[e.to] = 1;
  return reach[n - 1];
}

// Random DAG on nodes 0 (source) .. n-1 (sink) carrying a random feasible flow, with bounds around
// it; some edges unbounded above, but never a whole source-sink path.
std::vector<BoundedEdge> random_network(Rng& rng, int n) {
  while (true) {
    std::vector<BoundedEdge> edges;
    for (int u = 0; u < n; ++u)
      for (int v = u + 1; v < n; ++v)
        if (rng.uniform() < 0.5) edges.push_back({u, v, 0, 0});
    std::vector<std::int64_t> flow(edges.size(), 0);
    for (int path = 0; path < 4; ++path) {
      int u = 0;
      const std::int64_t amount = rng.integer(1, 5);
      while (u != n - 1) {
        std::vector<std::size_t> out;
        for (std::size_t i = 0; i < edges.size(); ++i)
          if (edges[i].from == u) out.push_back(i);
        if (out.empty()) break;
        const auto i = out[rng.integer(0, static_cast<std::int64_t>(out.size()) - 1)];
        flow[i] += amount;
        u = edges[i].to;
      }
      if (u != n - 1) flow.assign(edges.size(), 0);
    }
    for (std::size_t i = 0; i < edges.size(); ++i) {
      edges[i].lower = std::max<std::int64_t>(0, flow[i] - rng.integer(0, 3));
      edges[i].upper = rng.uniform() < 0.2 ? kInfiniteCapacity : flow[i] + rng.integer(0, 6);
    }
    if (!has_infinite_path(edges, n)) return edges;
  }
}

TEST(MinCutSolver, MatchesTheBestOfAllCutsOnRandomNetworks) {
  Rng rng(21);
  MinCutSolver solver;
  for (int trial = 0; trial < 300; ++trial) {
    const int n = static_cast<int>(rng.integer(2, 9));
    const auto edges = random_network(rng, n);
    const auto side = solver.min_cut(n, edges, 0, n - 1);
    ASSERT_TRUE(side.has_value()) << "trial " << trial;
    EXPECT_TRUE((*side)[0]);
    EXPECT_FALSE((*side)[n - 1]);
    std::int64_t best = kInfiniteCapacity;
    for (int mask = 0; mask < (1 << n); ++mask) {
      if (!(mask & 1) || (mask >> (n - 1)) & 1) continue;
      std::vector<char> s(n);
      for (int v = 0; v < n; ++v) s[v] = (mask >> v) & 1;
      best = std::min(best, cut_value(edges, s));
    }
    EXPECT_EQ(cut_value(edges, *side), best) << "trial " << trial;
  }
}

// A warm start changes the work, not the answer: from arbitrary (even out-of-bounds) start flows
// the source side equals the cold one, and the returned flow is a feasible flow whose value is the
// cut's (so it is maximum).
TEST(MinCutSolver, WarmStartGivesTheColdCutAndAMaximumFlow) {
  Rng rng(22);
  MinCutSolver solver;
  for (int trial = 0; trial < 300; ++trial) {
    const int n = static_cast<int>(rng.integer(2, 9));
    const auto edges = random_network(rng, n);
    const auto cold = solver.min_cut(n, edges, 0, n - 1);
    ASSERT_TRUE(cold.has_value()) << "trial " << trial;
    std::vector<std::int64_t> flow(edges.size());
    for (auto& f : flow) f = rng.integer(-2, 12);
    const auto warm = solver.min_cut(n, edges, 0, n - 1, &flow);
    ASSERT_TRUE(warm.has_value()) << "trial " << trial;
    EXPECT_EQ(*warm, *cold) << "trial " << trial;
    ASSERT_EQ(flow.size(), edges.size());
    std::vector<std::int64_t> net(n, 0);
    for (std::size_t i = 0; i < edges.size(); ++i) {
      EXPECT_GE(flow[i], edges[i].lower) << "trial " << trial << " edge " << i;
      EXPECT_LE(flow[i], edges[i].upper) << "trial " << trial << " edge " << i;
      net[edges[i].from] -= flow[i];
      net[edges[i].to] += flow[i];
    }
    for (int v = 1; v + 1 < n; ++v) EXPECT_EQ(net[v], 0) << "trial " << trial << " node " << v;
    EXPECT_EQ(net[n - 1], cut_value(edges, *warm)) << "trial " << trial;
  }
}

// The pipeline solver's use: one network kept between solves, a few edges' bounds changed each
// time (some to [0, 0], which is no edge), solved in place from the flow it has, also after a
// solve that found no feasible flow. Each solve must give what solving that network from scratch
// gives (the cut, or that no flow meets the bounds) and a maximum flow.
// After a solve of `kept` (edges in the order of `edges`): its source side is the cold `expected`
// and its flow a maximum flow within the bounds.
void expect_cold_cut_and_maximum_flow(const MinCutSolver& kept,
                                      const std::vector<BoundedEdge>& edges,
                                      const std::vector<char>& expected, int trial) {
  const int n = static_cast<int>(expected.size());
  std::vector<char> side(n);
  for (int v = 0; v < n; ++v) side[v] = kept.source_side(v) ? 1 : 0;
  EXPECT_EQ(side, expected) << "trial " << trial;
  std::vector<std::int64_t> net(n, 0);
  for (std::size_t i = 0; i < edges.size(); ++i) {
    const auto f = kept.flow(static_cast<int>(i));
    EXPECT_GE(f, edges[i].lower) << "trial " << trial << " edge " << i;
    EXPECT_LE(f, edges[i].upper) << "trial " << trial << " edge " << i;
    net[edges[i].from] -= f;
    net[edges[i].to] += f;
  }
  for (int v = 1; v + 1 < n; ++v) EXPECT_EQ(net[v], 0) << "trial " << trial << " node " << v;
  EXPECT_EQ(net[n - 1], cut_value(edges, expected)) << "trial " << trial;
}

TEST(MinCutSolver, KeptNetworkGivesTheColdCutAfterEveryChange) {
  Rng rng(23);
  MinCutSolver kept, cold;
  int solved = 0, infeasible = 0;
  for (int trial = 0; trial < 100; ++trial) {
    const int n = static_cast<int>(rng.integer(2, 8));
    std::vector<BoundedEdge> edges;
    std::vector<std::vector<int>> index(n, std::vector<int>(n, -1));
    kept.reset(n);
    for (int u = 0; u < n; ++u) {
      for (int v = u + 1; v < n; ++v) {
        index[u][v] = kept.add_edge(u, v);
        edges.push_back({u, v, 0, 0});
      }
    }
    for (int round = 0; round < 20; ++round) {
      // A fresh random network's bounds, on every edge at first, then on one to three.
      std::vector<BoundedEdge> fresh(edges.size(), BoundedEdge{0, 0, 0, 0});
      for (const auto& e : random_network(rng, n)) fresh[index[e.from][e.to]] = e;
      const int changes =
          round == 0 ? static_cast<int>(edges.size()) : static_cast<int>(rng.integer(1, 3));
      for (int c = 0; c < changes; ++c) {
        const auto i = static_cast<std::size_t>(
            round == 0 ? c : rng.integer(0, static_cast<std::int64_t>(edges.size()) - 1));
        edges[i].lower = fresh[i].lower;
        edges[i].upper = fresh[i].upper;
        kept.set_bounds(static_cast<int>(i), edges[i].lower, edges[i].upper);
      }
      if (has_infinite_path(edges, n)) continue;  // no finite cut: outside the contract
      const auto expected = cold.min_cut(n, edges, 0, n - 1);
      const bool feasible = kept.solve(0, n - 1);
      ASSERT_EQ(feasible, expected.has_value()) << "trial " << trial << " round " << round;
      if (!feasible) {
        ++infeasible;
        continue;
      }
      ++solved;
      expect_cold_cut_and_maximum_flow(kept, edges, *expected, trial);
    }
  }
  // Both outcomes happened often.
  EXPECT_GT(solved, 500);
  EXPECT_GT(infeasible, 50);
}

// Bounds moved around the flow a solve left (as a pipeline step moves most of them: no flow
// clamped) let the next solve extend the last source side instead of searching again; it must
// still be the cold cut, whether the side stayed, grew, or (an arc from it losing its room) had
// to be searched again, and whether a grown side reached the sink (then the flow is augmented).
TEST(MinCutSolver, ExtendedSourceSideIsTheColdCut) {
  Rng rng(41);
  MinCutSolver kept, cold;
  int grew = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const int n = static_cast<int>(rng.integer(3, 9));
    auto edges = random_network(rng, n);
    if (edges.empty()) continue;
    kept.reset(n);
    for (const auto& e : edges) kept.add_edge(e.from, e.to);
    for (std::size_t i = 0; i < edges.size(); ++i)
      kept.set_bounds(static_cast<int>(i), edges[i].lower, edges[i].upper);
    std::vector<char> before;
    for (int round = 0; round < 30; ++round) {
      if (round > 0) {
        const int changes = static_cast<int>(rng.integer(1, 3));
        for (int c = 0; c < changes; ++c) {
          const auto i =
              static_cast<std::size_t>(rng.integer(0, static_cast<std::int64_t>(edges.size()) - 1));
          // Mostly around the present flow, now and then clamping it.
          const std::int64_t f = kept.flow(static_cast<int>(i));
          const bool clamp = rng.uniform() < 0.1;
          edges[i].lower = std::max<std::int64_t>(0, f - rng.integer(0, 2)) + (clamp ? 1 : 0);
          edges[i].upper = rng.uniform() < 0.2 ? kInfiniteCapacity
                                               : std::max(edges[i].lower, f + rng.integer(0, 2));
          kept.set_bounds(static_cast<int>(i), edges[i].lower, edges[i].upper);
        }
      }
      if (has_infinite_path(edges, n)) break;  // no finite cut: outside the contract
      const auto expected = cold.min_cut(n, edges, 0, n - 1);
      ASSERT_EQ(kept.solve(0, n - 1), expected.has_value()) << "trial " << trial;
      if (!expected) break;
      expect_cold_cut_and_maximum_flow(kept, edges, *expected, trial);
      if (!before.empty() && *expected != before) ++grew;
      before = *expected;
    }
  }
  EXPECT_GT(kept.reaches_extended(), 0);
  EXPECT_GT(grew, 100);
}

TEST(MinCutSolver, ReportsBoundsNoFlowMeets) {
  MinCutSolver solver;
  // Node 1 must receive at least 5 but can pass on at most 3.
  const std::vector<BoundedEdge> edges{{0, 1, 5, 5}, {1, 2, 0, 3}};
  EXPECT_FALSE(solver.min_cut(3, edges, 0, 2).has_value());
}

// The critical network of 100,000 microbatches is a path of this order: augmenting along it must
// not recurse once per node. Capacities 1..7 repeating: the minimum cut is one capacity-1 edge.
TEST(MinCutSolver, CutsAMillionEdgeChainWithoutRecursion) {
  const int n = 1'000'000;
  std::vector<BoundedEdge> edges;
  for (int v = 0; v + 1 < n; ++v) edges.push_back({v, v + 1, 0, 1 + (v + 3) % 7});
  MinCutSolver solver;
  const auto side = solver.min_cut(n, edges, 0, n - 1);
  ASSERT_TRUE(side.has_value());
  EXPECT_EQ(cut_value(edges, *side), 1);
  // The first capacity-1 edge is 4 -> 5: everything after it is cut off from the source.
  EXPECT_TRUE((*side)[4]);
  EXPECT_FALSE((*side)[5]);
}

}  // namespace
}  // namespace kareus::frontier
