// SPDX-License-Identifier: Apache-2.0
// Immediate dominators over a DAG's critical edges, kept lazily for the frontier polish. The polish
// asks "is u on every longest path through w" after nearly every kept move, and a move changes the
// critical edges only around the instructions it touched: into those after the first of them in
// topological order (their earliest starts moved) and out of those before the last (their tails
// moved). Rebuilding both trees after each move was a fifth of the polish; this tree recomputes a
// parent only when asked about an instruction at or after the first stale one, and answers
// ancestry by walking up parent links (an ancestor comes earlier in the order, so the walk stops
// at the first instruction not after u) instead of numbering the whole tree again.
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

namespace kareus::frontier {

class LazyDominatorTree {
 public:
  // `order`: the instructions, each after every one its critical edges come from.
  explicit LazyDominatorTree(std::vector<int> order) : order_(std::move(order)) {
    const int n = static_cast<int>(order_.size());
    rank_.resize(n);
    for (int k = 0; k < n; ++k) rank_[order_[k]] = k;
    parent_.assign(n, -1);
  }

  int rank(int v) const { return rank_[v]; }
  // The critical edges into the instructions from rank `k` of the order on may have changed.
  void stale_from(int k) { exact_ = std::min(exact_, k); }

  // Whether u is w or on every critical path into w (from an instruction with no critical edge
  // in). `critical(v, add)` calls add(x) for each x with a critical edge into v, as they are now.
  template <class Critical>
  bool dominates(int u, int w, const Critical& critical) {
    update(rank_[w], critical);
    while (w >= 0 && rank_[w] > rank_[u]) w = parent_[w];
    return w == u;
  }

  // v's immediate dominator (-1: none), made exact first.
  template <class Critical>
  int parent(int v, const Critical& critical) {
    update(rank_[v], critical);
    return parent_[v];
  }

 private:
  // Parents exact up to rank `last`: an instruction's is the nearest common dominator of its
  // critical predecessors, which come earlier in the order and so are exact already.
  template <class Critical>
  void update(int last, const Critical& critical) {
    const auto common = [&](int a, int b) {
      // The later of two cannot be an ancestor of the other: it moves up until they meet.
      while (a != b && a >= 0 && b >= 0) {
        if (rank_[a] < rank_[b]) std::swap(a, b);
        a = parent_[a];
      }
      return a == b ? a : -1;
    };
    for (; exact_ <= last; ++exact_) {
      const int v = order_[exact_];
      int dominator = -2;  // no critical edge yet
      critical(v, [&](int x) { dominator = dominator == -2 ? x : common(dominator, x); });
      parent_[v] = std::max(dominator, -1);
    }
  }

  std::vector<int> order_, rank_, parent_;
  int exact_ = 0;  // parents at ranks below it are exact
};

}  // namespace kareus::frontier
