// Longest paths through a pipeline DAG, as the pipeline solver takes them at every step: the
// earliest start of each instruction (longest path from the roots to its start) and its tail
// (longest path from its end to the leaves), over the DAG in compressed rows with a topological
// order; an edge between stages (`*_cross`) carries a transfer delay.
//
// A solver step changes the durations of a few instructions. The `update_*` passes then recompute
// only the instructions downstream (starts) or upstream (tails) of a changed one, and stop where a
// value comes out the same: each instruction they visit gets the same sums in the same order as in
// the full pass (a maximum over predecessors does not depend on their order), so the values are
// identical, floating-point ones included. An instruction whose value does not change cannot
// change any other, so nothing beyond is visited.
#pragma once

#include <algorithm>
#include <span>
#include <vector>

#include "kareus/workload/pipeline.hpp"

namespace kareus::frontier {

class DagPaths {
 public:
  explicit DagPaths(const workload::PipelineDag& dag);

  int size() const { return static_cast<int>(order.size()); }

  // Full pass: start[v] = latest finish of v's predecessors (plus `transfer` from another stage),
  // finish[v] = start[v] + duration(v); returns the makespan (the latest finish). With `finish`
  // beside the starts each duration is looked up once, not once per edge.
  template <class T, class Duration>
  T earliest_starts(const Duration& duration, T transfer, std::vector<T>& start,
                    std::vector<T>& finish) const {
    for (int v : order) {
      start_of(v, transfer, start, finish);
      finish[v] = start[v] + duration(v);
    }
    return makespan(finish);
  }
  template <class T, class Duration>
  T earliest_starts(const Duration& duration, T transfer, std::vector<T>& start) const {
    std::vector<T> finish(start.size());
    return earliest_starts(duration, transfer, start, finish);
  }

  // The latest of the finishes: a leaf's, since no duration or transfer is negative.
  template <class T>
  T makespan(const std::vector<T>& finish) const {
    T latest{};
    for (int v : leaves) latest = std::max(latest, finish[v]);
    return latest;
  }

  // `start` and `finish` hold a full pass's values before the durations of `changed` changed;
  // brings them to the current durations. `dirty` is the caller's scratch, size() zeros, left so.
  // Every instruction whose start or finish changed is appended to `moved` when given.
  template <class T, class Duration>
  void update_earliest_starts(const Duration& duration, T transfer, std::span<const int> changed,
                              std::vector<T>& start, std::vector<T>& finish,
                              std::vector<char>& dirty, std::vector<int>* moved = nullptr) const {
    int first = size();
    for (int v : changed) {
      dirty[v] = 1;
      first = std::min(first, position[v]);
    }
    for (int p = first; p < size(); ++p) {
      const int v = order[p];
      if (!dirty[v]) continue;
      dirty[v] = 0;
      const T s = start[v];
      start_of(v, transfer, start, finish);
      const T f = start[v] + duration(v);
      if (moved && (s != start[v] || f != finish[v])) moved->push_back(v);
      if (f == finish[v]) continue;
      finish[v] = f;
      for (int i = succ_begin[v]; i < succ_begin[v + 1]; ++i) dirty[succ[i]] = 1;
    }
  }

  // Full pass: tail[v] = the longest path after v's end, over its successors w of
  // duration(w) + tail[w] (plus `transfer` to another stage); 0 at the leaves.
  template <class T, class Duration>
  void tails(const Duration& duration, T transfer, std::vector<T>& tail) const {
    for (auto it = order.rbegin(); it != order.rend(); ++it) tail_of(*it, duration, transfer, tail);
  }

  // `tail` holds a full pass's values before the durations of `changed` changed; brings it to the
  // current durations (`dirty` as above).
  template <class T, class Duration>
  void update_tails(const Duration& duration, T transfer, std::span<const int> changed,
                    std::vector<T>& tail, std::vector<char>& dirty) const {
    int last = -1;
    const auto mark_predecessors = [&](int w) {
      for (int i = pred_begin[w]; i < pred_begin[w + 1]; ++i) {
        dirty[pred[i]] = 1;
        last = std::max(last, position[pred[i]]);
      }
    };
    for (int w : changed) mark_predecessors(w);
    for (int p = last; p >= 0; --p) {
      const int v = order[p];
      if (!dirty[v]) continue;
      dirty[v] = 0;
      const T before = tail[v];
      tail_of(v, duration, transfer, tail);
      if (tail[v] != before) mark_predecessors(v);
    }
  }

  std::vector<int> order;     // topological
  std::vector<int> position;  // of each instruction in `order`
  std::vector<int> leaves;    // the instructions without successors
  std::vector<int> succ_begin, succ, pred_begin, pred;
  std::vector<char> succ_cross, pred_cross;
  // Of each entry of `pred` (the edge u -> v listed at v), the index of the same edge in `succ`.
  std::vector<int> pred_edge;

 private:
  template <class T>
  void start_of(int v, T transfer, std::vector<T>& start, const std::vector<T>& finish) const {
    T s{};
    for (int i = pred_begin[v]; i < pred_begin[v + 1]; ++i)
      s = std::max(s, finish[pred[i]] + (pred_cross[i] ? transfer : T{}));
    start[v] = s;
  }
  template <class T, class Duration>
  void tail_of(int v, const Duration& duration, T transfer, std::vector<T>& tail) const {
    T t{};
    for (int i = succ_begin[v]; i < succ_begin[v + 1]; ++i) {
      const int w = succ[i];
      t = std::max(t, duration(w) + tail[w] + (succ_cross[i] ? transfer : T{}));
    }
    tail[v] = t;
  }
};

}  // namespace kareus::frontier
