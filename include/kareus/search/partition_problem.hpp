// SPDX-License-Identifier: Apache-2.0
// The search problem of one partition key: its configuration space measured by an Executor.
#pragma once

#include "kareus/executor/executor.hpp"
#include "kareus/partition/config_space.hpp"
#include "kareus/search/problem.hpp"

namespace kareus::search {

class PartitionProblem : public Problem {
 public:
  // Throws kareus::Error when the partition has nothing to search (see ConfigSpace::of).
  PartitionProblem(partition::Partition partition, executor::Executor& executor);

  const partition::Partition& partition() const { return partition_; }
  const partition::ConfigSpace& space() const { return space_; }

  std::size_t size() const override { return space_.size(); }
  std::string key(std::size_t id) const override { return space_.key(id); }
  // Clock in MHz, SM index, one-hot launch slot (the artifact's encoding).
  std::vector<double> raw_features(std::size_t id) const override;
  // Datasheet roofline predictions (src/search/roofline_prior.hpp), never a measurement.
  std::vector<double> physical_features(std::size_t id) const override;
  Watts static_power() const override { return executor_.gpu().static_power; }
  // Logical compute ops: launch slots, since consecutive memory-bound ops form one (paper §4.1).
  std::size_t compute_ops() const override { return partition_.slots.size(); }
  std::vector<Measurement> measure(const std::vector<std::size_t>& ids) override;
  std::vector<Measurement> measure_repeat(const std::vector<std::size_t>& ids,
                                          std::size_t repeat) override;

 private:
  partition::Partition partition_;
  executor::Executor& executor_;
  partition::ConfigSpace space_;
};

}  // namespace kareus::search
