// SPDX-License-Identifier: Apache-2.0
// The `kareus` strategy's model-guided picks shared by the keys of one plan. The iteration
// composes every key's per-clock fronts, and under full recomputation two instructions consume a
// forward key's fronts (the forward pass and the recomputation in the backward pass), one a
// backward key's. A key used fewer times than the most-used keys gives its share of the cap for
// model-guided picks to a pool; every key returns what it leaves of its cap; the most-used keys
// whose covering shapes cannot reach every clock within their own cap draw from the pool. The
// plan never measures more than its keys' caps together (each at most half of `paper`'s full
// size), so the workload stays within the budget. Measured effect:
// docs/benchmarks/search_quality.md.
#pragma once

#include <cstddef>
#include <vector>

#include "kareus/executor/executor.hpp"
#include "kareus/partition/partition.hpp"
#include "kareus/search/problem.hpp"

namespace kareus::search {

// What `kareus` would take on a problem on its own (kareus_mbo.cpp).
struct KareusBudget {
  std::size_t cap = 0;    // most readings, repeats included
  std::size_t model = 0;  // of them, kept for model-guided picks
  // The three covering shapes reach every clock within the cap (no model share is kept then).
  bool covers_every_clock = false;
};
KareusBudget kareus_budget(const Problem& problem);

class SharedPicks {
 public:
  struct Key {
    KareusBudget budget;
    // Instructions of the iteration whose composition consumes the key's fronts.
    int uses = 1;
  };
  explicit SharedPicks(std::vector<Key> keys);

  // Search order, deterministic: the givers first, then keys that neither give nor draw, then the
  // drawers, each in the given order, so that the pool is known when it is drawn.
  const std::vector<std::size_t>& order() const { return order_; }
  // Model-guided picks for key i, taken when its search starts (in order()): none for a giver;
  // its own share plus, for a drawer, its part of the pool (the pool times its cap over the caps
  // of the drawers not yet searched, so the last drawer takes the rest).
  std::size_t draw(std::size_t i);
  // Records key i's readings; what it left of its cap (with the picks drawn) returns to the pool.
  // A giver may take its share back (under noise it goes to its coverage): the pool pays it, and
  // the givers are searched before anything is drawn. Throws beyond its allotment and own cap.
  void record(std::size_t i, std::size_t spent);

  // The keys' own caps together: what the plan's readings never exceed.
  std::size_t total() const { return total_; }
  std::size_t pool() const { return pool_; }

 private:
  bool gives(std::size_t i) const;
  bool draws(std::size_t i) const;

  std::vector<Key> keys_;
  std::vector<std::size_t> order_;
  std::vector<std::size_t> allotted_;  // cap with the picks drawn, per key
  std::vector<bool> drawn_;
  std::vector<bool> searched_;
  int most_uses_ = 0;
  std::size_t total_ = 0;
  std::size_t pool_ = 0;
};

// The shared picks of a workload's partitions (one per key, as representative_partitions gives
// them), each key's budget from its configuration space on `executor`'s GPU.
SharedPicks shared_picks(const workload::Workload& w,
                         const std::vector<partition::Partition>& partitions,
                         executor::Executor& executor);

}  // namespace kareus::search
