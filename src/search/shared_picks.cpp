// SPDX-License-Identifier: Apache-2.0
#include "kareus/search/shared_picks.hpp"

#include <algorithm>

#include "kareus/core/error.hpp"
#include "kareus/search/partition_problem.hpp"

namespace kareus::search {

SharedPicks::SharedPicks(std::vector<Key> keys)
    : keys_(std::move(keys)),
      allotted_(keys_.size(), 0),
      drawn_(keys_.size(), false),
      searched_(keys_.size(), false) {
  for (const Key& k : keys_) {
    most_uses_ = std::max(most_uses_, k.uses);
    total_ += k.budget.cap;
  }
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    if (gives(i)) pool_ += keys_[i].budget.model;
  }
  for (int group = 0; group < 3; ++group) {
    for (std::size_t i = 0; i < keys_.size(); ++i) {
      if ((gives(i) ? 0 : draws(i) ? 2 : 1) == group) order_.push_back(i);
    }
  }
}

bool SharedPicks::gives(std::size_t i) const {
  return keys_[i].uses < most_uses_;
}

bool SharedPicks::draws(std::size_t i) const {
  return !gives(i) && !keys_[i].budget.covers_every_clock;
}

std::size_t SharedPicks::draw(std::size_t i) {
  const KareusBudget& b = keys_.at(i).budget;
  if (drawn_[i]) throw Error::invalid("shared picks", "key", std::to_string(i), "drawn once");
  drawn_[i] = true;
  std::size_t picks = gives(i) ? 0 : b.model;
  if (draws(i)) {
    std::size_t caps = 0;
    for (std::size_t j = 0; j < keys_.size(); ++j) {
      if (draws(j) && !drawn_[j]) caps += keys_[j].budget.cap;
    }
    const std::size_t part = pool_ * b.cap / (caps + b.cap);
    pool_ -= part;
    picks += part;
  }
  allotted_[i] = b.cap - b.model + picks;
  return picks;
}

void SharedPicks::record(std::size_t i, std::size_t spent) {
  if (!drawn_.at(i) || searched_[i]) {
    throw Error::invalid("shared picks", "key", std::to_string(i), "recorded once, after its draw");
  }
  const std::size_t over = spent - std::min(spent, allotted_[i]);
  if (spent > std::max(allotted_[i], keys_[i].budget.cap) || over > pool_) {
    throw Error::invalid("shared picks", "readings", std::to_string(spent),
                         "at most the key's allotment or own cap, beyond its allotment only what "
                         "the pool holds");
  }
  searched_[i] = true;
  pool_ = pool_ + allotted_[i] - std::min(allotted_[i], spent) - over;
}

SharedPicks shared_picks(const workload::Workload& w,
                         const std::vector<partition::Partition>& partitions,
                         executor::Executor& executor) {
  // Under full recomputation the backward instruction runs the forward partitions again, each
  // with its own configuration from the same key's fronts (planner/composition.cpp).
  std::vector<std::string> forward;
  for (const partition::Partition& p :
       partition::build_partitions(w, workload::Direction::kForward, w.stage_layers().front()))
    forward.push_back(p.key);
  const bool recompute = w.parallelism.recompute == workload::Recompute::kFull;
  std::vector<SharedPicks::Key> keys;
  for (const partition::Partition& p : partitions) {
    const bool is_forward = std::find(forward.begin(), forward.end(), p.key) != forward.end();
    keys.push_back({kareus_budget(PartitionProblem(p, executor)), is_forward && recompute ? 2 : 1});
  }
  return SharedPicks(std::move(keys));
}

}  // namespace kareus::search
