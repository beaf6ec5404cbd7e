// SPDX-License-Identifier: Apache-2.0
#include "dominator_tree.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "kareus/core/rng.hpp"

namespace kareus::frontier {
namespace {

// A random DAG over a random topological order, each edge critical or not; `into[v]` lists the
// edges into v as indices into `from` and `critical`.
struct CriticalDag {
  std::vector<int> order, rank, from;
  std::vector<char> critical;
  std::vector<std::vector<int>> into;

  CriticalDag(Rng& rng, int n) : order(n), rank(n), into(n) {
    std::iota(order.begin(), order.end(), 0);
    for (int k = n - 1; k > 0; --k) std::swap(order[k], order[rng.integer(0, k)]);
    for (int k = 0; k < n; ++k) rank[order[k]] = k;
    const double density = rng.uniform(0.05, 0.5);
    for (int b = 1; b < n; ++b)
      for (int a = 0; a < b; ++a)
        if (rng.uniform() < density) {
          into[order[b]].push_back(static_cast<int>(from.size()));
          from.push_back(order[a]);
          critical.push_back(rng.uniform() < 0.6);
        }
  }

  // Whether u is w or every critical path into w (from an instruction without a critical edge
  // in) has u: a search from those instructions that never enters u does not reach w.
  bool dominates(int u, int w) const {
    if (u == w) return true;
    const int n = static_cast<int>(order.size());
    std::vector<char> reached(n, 0);
    for (int v : order) {
      if (v == u) continue;
      bool any_in = false;
      for (int e : into[v]) {
        if (!critical[e]) continue;
        any_in = true;
        reached[v] |= reached[from[e]];
      }
      if (!any_in) reached[v] = 1;
    }
    return !reached[w];
  }

  // The dominator of v other than v itself that comes last in the order (-1: none).
  int immediate_dominator(int v) const {
    int best = -1;
    for (int u : order)
      if (u != v && rank[u] < rank[v] && dominates(u, v)) best = u;
    return best;
  }
};

// The lazily kept tree must answer as one built from scratch, by brute force, after any sequence
// of changes confined to the edges into instructions from a rank on (what stale_from promises),
// with queries at ranks before the change (answered from parents kept) and after it (recomputed).
// Fails when stale_from is ignored or the walk up the tree stops early.
TEST(LazyDominatorTree, AnswersAsTheBruteForceAfterEveryChange) {
  Rng rng(41);
  int kept_answers = 0, dominated = 0, not_dominated = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int n = static_cast<int>(rng.integer(1, 24));
    CriticalDag dag(rng, n);
    LazyDominatorTree tree(dag.order);
    const auto critical = [&](int v, const auto& add) {
      for (int e : dag.into[v])
        if (dag.critical[e]) add(dag.from[e]);
    };
    int exact = 0;  // the tree's parents below this rank are exact (as it keeps them)
    for (int event = 0; event < 60; ++event) {
      if (rng.uniform() < 0.3) {
        const int k = static_cast<int>(rng.integer(0, n - 1));
        for (int b = k; b < n; ++b)
          for (int e : dag.into[dag.order[b]])
            if (rng.uniform() < 0.3) dag.critical[e] = !dag.critical[e];
        tree.stale_from(k);
        exact = std::min(exact, k);
        continue;
      }
      // Mostly u before w in the order, where it can dominate.
      const int w = static_cast<int>(rng.integer(0, n - 1));
      const int u = rng.uniform() < 0.8 ? dag.order[rng.integer(0, dag.rank[w])]
                                        : static_cast<int>(rng.integer(0, n - 1));
      kept_answers += dag.rank[w] < exact;
      const bool expected = dag.dominates(u, w);
      ASSERT_EQ(tree.dominates(u, w, critical), expected)
          << "trial " << trial << " event " << event << " u " << u << " w " << w;
      (expected ? dominated : not_dominated) += u != w;
      ASSERT_EQ(tree.parent(w, critical), dag.immediate_dominator(w))
          << "trial " << trial << " event " << event << " w " << w;
      exact = std::max(exact, dag.rank[w] + 1);
    }
  }
  EXPECT_GT(kept_answers, 4000);  // queries answered from parents computed before a change
  EXPECT_GT(dominated, 300);
  EXPECT_GT(not_dominated, 300);
}

}  // namespace
}  // namespace kareus::frontier
