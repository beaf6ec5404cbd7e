// SPDX-License-Identifier: Apache-2.0
// The critical subgraph of the pipeline solver's planned durations, kept from one step to the next.
// An instruction is critical (zero slack) exactly when its finish is the makespan or it has a tight
// edge (the successor starts at its finish plus the edge's transfer) to a critical successor: the
// critical set is what reaches an instruction ending at the makespan over tight edges. It is stuck
// (on a critical path to the end with only fastest unit counts) by the same rule among the
// instructions at their fastest count. A step moves the start of about half the DAG, but on the
// 70B dp1 plan about 90 % of the instructions are critical and from one max-flow solve to the next
// fewer than one instruction and about one edge change their critical state on average (counted
// over its 66,000 solves per method): the latest finishes of every instruction and a visit of
// every network bound per step (a quarter of dp1's CPU) found nearly nothing new. Tightness depends
// only on an edge's two ends' times, so it can change only on edges into instructions from the
// first one a step moved; the flags are recomputed only from the tails of the edges whose tightness
// changed and the instructions whose units changed, backwards in topological order, as far as they
// change.
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

#include "dag_graph.hpp"

namespace kareus::frontier {

class CriticalSubgraph {
 public:
  // An instruction whose network bounds may have changed (edge -1: its own arc and its source or
  // sink edge) or its outgoing edge `edge` (an index into the graph's successor lists).
  struct Change {
    int instruction = 0;
    int edge = -1;
  };

  // `graph` numbered by rank (its order is 0, 1, 2, ...), outliving this; `fastest[v]` the least
  // unit count of instruction v.
  CriticalSubgraph(const Graph& graph, std::vector<std::int64_t> fastest);

  // Brings the flags to durations `units` (each at least 1) with earliest starts `start`, finishes
  // `finish` and latest finish `makespan`, an edge between stages waiting `transfer`. No
  // instruction before `from` may have changed its units, start or finish since the last update
  // (on the first, every instruction is taken whatever `from`).
  void update(const std::vector<std::int64_t>& units, const std::vector<std::int64_t>& start,
              const std::vector<std::int64_t>& finish, std::int64_t transfer, std::int64_t makespan,
              int from);

  const std::vector<char>& critical() const { return critical_; }
  bool stuck(int v) const { return stuck_[v] != 0; }
  int count() const { return count_; }
  // A root is stuck: every cut of the critical network is infinite.
  bool cannot_shorten() const { return cannot_shorten_; }
  // Since the update before the last: every instruction whose critical state or units changed,
  // every leaf (its finish against the makespan), and every edge whose critical state (both ends
  // critical and tight) changed, each once, in the order instruction 0, its outgoing edges,
  // instruction 1, ... (the first update lists everything). A superset of what changed.
  const std::vector<Change>& changes() const { return changes_; }

 private:
  void enqueue(int v);
  // v's flags from its successors'; true when they changed.
  bool recompute(int v, const std::vector<std::int64_t>& units,
                 const std::vector<std::int64_t>& finish, std::int64_t makespan);

  const Graph& graph_;
  std::vector<std::int64_t> fastest_;
  std::vector<int> roots_;
  std::vector<std::int64_t> units_seen_;
  std::vector<char> tight_;  // per successor index (2 before the first update)
  std::vector<char> critical_, stuck_, queued_;
  std::priority_queue<int> queue_;  // the latest instruction first: its successors are done
  std::vector<Change> changes_;
  int count_ = 0;
  bool cannot_shorten_ = false;
  bool first_ = true;
};

}  // namespace kareus::frontier
