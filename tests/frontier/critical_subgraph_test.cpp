// SPDX-License-Identifier: Apache-2.0
#include "critical_subgraph.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "kareus/core/rng.hpp"

namespace kareus::frontier {
namespace {

// A random DAG on up to 4 stages: each edge from an earlier to a later instruction of a random
// order, so that the DAG's own numbering is not topological; some instructions without edges.
workload::PipelineDag random_dag(Rng& rng, int n) {
  workload::PipelineDag dag;
  dag.stages = static_cast<int>(rng.integer(1, 4));
  for (int v = 0; v < n; ++v)
    dag.nodes.push_back({static_cast<int>(rng.integer(0, dag.stages - 1)), v});
  std::vector<int> rank(n);
  std::iota(rank.begin(), rank.end(), 0);
  for (int i = n - 1; i > 0; --i) std::swap(rank[i], rank[rng.integer(0, i)]);
  const double density = rng.uniform(0.05, 0.4);
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b)
      if (rng.uniform() < density) dag.edges.emplace_back(rank[a], rank[b]);
  return dag;
}

struct Flags {
  std::vector<char> critical, stuck;
  int count = 0;
  bool cannot_shorten = false;
};

// Edge i (a successor index) out of u: both ends critical and the edge tight.
bool critical_edge(const Graph& g, const Flags& f, const std::vector<std::int64_t>& units,
                   const std::vector<std::int64_t>& start, std::int64_t transfer, int u, int i) {
  const int w = g.succ[i];
  return f.critical[u] && f.critical[w] &&
         start[u] + units[u] + (g.succ_cross[i] ? transfer : 0) == start[w];
}

// The critical subgraph from scratch, the way the solver computed it before it was kept: latest
// finishes backwards from the makespan, critical where the slack is zero, stuck where a critical
// instruction at its fastest count ends the iteration or has a critical edge to a stuck one.
Flags from_scratch(const Graph& g, const std::vector<std::int64_t>& units,
                   const std::vector<std::int64_t>& start, const std::vector<std::int64_t>& fastest,
                   std::int64_t transfer, std::int64_t makespan) {
  const int n = static_cast<int>(units.size());
  Flags f{std::vector<char>(n), std::vector<char>(n), 0, false};
  std::vector<std::int64_t> latest_finish(n);
  for (int v = n - 1; v >= 0; --v) {
    std::int64_t finish = makespan;
    for (int i = g.succ_begin[v]; i < g.succ_begin[v + 1]; ++i)
      finish = std::min(
          finish, latest_finish[g.succ[i]] - units[g.succ[i]] - (g.succ_cross[i] ? transfer : 0));
    latest_finish[v] = finish;
    f.critical[v] = start[v] + units[v] == finish;
    f.count += f.critical[v];
    bool to_the_end = start[v] + units[v] == makespan;
    for (int i = g.succ_begin[v]; i < g.succ_begin[v + 1]; ++i)
      to_the_end =
          to_the_end || (f.stuck[g.succ[i]] && critical_edge(g, f, units, start, transfer, v, i));
    f.stuck[v] = f.critical[v] && units[v] == fastest[v] && to_the_end;
    if (f.stuck[v] && start[v] == 0) f.cannot_shorten = true;
  }
  return f;
}

// After every change of random instructions' units (the earliest starts recomputed from the first
// changed one on, as the solver does), the kept flags equal the flags from scratch, and every
// instruction whose critical state or units changed and every edge whose critical state changed
// is listed among the changes, in the order of a pass over instructions and their edges.
TEST(CriticalSubgraph, KeptFlagsAreTheFlagsFromScratchAfterEveryChange) {
  Rng rng(7);
  int critical_changes = 0, edge_changes = 0, stuck_roots = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const int n = static_cast<int>(rng.integer(1, 40));
    const auto dag = random_dag(rng, n);
    const Graph g = Graph::numbered_by_rank(dag, dag.topological_order());
    const std::int64_t transfer = rng.integer(0, 2);
    std::vector<std::int64_t> fastest(n), units(n), start(n), finish(n);
    for (int v = 0; v < n; ++v) {
      fastest[v] = rng.integer(1, 3);
      units[v] = fastest[v] + rng.integer(0, 3);
    }
    CriticalSubgraph kept(g, fastest);
    Flags before{std::vector<char>(n), std::vector<char>(n), 0, false};
    std::vector<std::int64_t> units_before(n, -1), start_before(n);
    int from = 0;
    for (int event = 0; event < 60; ++event) {
      const std::int64_t makespan = g.earliest_starts<std::int64_t>([&](int v) { return units[v]; },
                                                                    transfer, start, finish, from);
      kept.update(units, start, finish, transfer, makespan, from);
      const Flags now = from_scratch(g, units, start, fastest, transfer, makespan);
      for (int v = 0; v < n; ++v) {
        ASSERT_EQ(kept.critical()[v], now.critical[v]) << "trial " << trial << " event " << event;
        ASSERT_EQ(kept.stuck(v), static_cast<bool>(now.stuck[v]))
            << "trial " << trial << " event " << event;
      }
      ASSERT_EQ(kept.count(), now.count);
      ASSERT_EQ(kept.cannot_shorten(), now.cannot_shorten);
      stuck_roots += now.cannot_shorten;
      const auto& changes = kept.changes();
      const auto listed = [&](int v, int edge) {
        return std::any_of(changes.begin(), changes.end(),
                           [&](const auto& c) { return c.instruction == v && c.edge == edge; });
      };
      for (std::size_t k = 1; k < changes.size(); ++k) {
        const auto& a = changes[k - 1];
        const auto& b = changes[k];
        ASSERT_TRUE(a.instruction < b.instruction ||
                    (a.instruction == b.instruction && a.edge < b.edge));
      }
      for (int v = 0; v < n; ++v) {
        if (now.critical[v] != before.critical[v] || units[v] != units_before[v]) {
          EXPECT_TRUE(listed(v, -1)) << "trial " << trial << " event " << event;
          critical_changes += now.critical[v] != before.critical[v];
        }
        for (int i = g.succ_begin[v]; i < g.succ_begin[v + 1]; ++i) {
          if (critical_edge(g, now, units, start, transfer, v, i) ==
              critical_edge(g, before, units_before, start_before, transfer, v, i))
            continue;
          EXPECT_TRUE(listed(v, i)) << "trial " << trial << " event " << event;
          ++edge_changes;
        }
      }
      for (int v : g.leaves) EXPECT_TRUE(listed(v, -1));
      before = now;
      units_before = units;
      start_before = start;
      // Change a few instructions' units, from a random one on (about the solver's steps: a
      // few instructions around the cut, one unit each way, never below the fastest count).
      from = static_cast<int>(rng.integer(0, n - 1));
      const int moves = static_cast<int>(rng.integer(1, 3));
      for (int k = 0; k < moves; ++k) {
        const int v = static_cast<int>(rng.integer(from, n - 1));
        units[v] = std::max(fastest[v], units[v] + (rng.uniform() < 0.6 ? -1 : 1));
      }
    }
  }
  // The checks saw every kind of change.
  EXPECT_GT(critical_changes, 1000);
  EXPECT_GT(edge_changes, 1000);
  EXPECT_GT(stuck_roots, 100);
}

}  // namespace
}  // namespace kareus::frontier
