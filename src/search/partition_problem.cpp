// SPDX-License-Identifier: Apache-2.0
#include "kareus/search/partition_problem.hpp"

#include "roofline_prior.hpp"

namespace kareus::search {

PartitionProblem::PartitionProblem(partition::Partition partition, executor::Executor& executor)
    : partition_(std::move(partition)),
      executor_(executor),
      space_(partition::ConfigSpace::of(partition_, executor.gpu())) {}

std::vector<double> PartitionProblem::raw_features(std::size_t id) const {
  const partition::ConfigSpace::Index i = space_.index(id);
  std::vector<double> row{space_.clocks()[i.clock].value(), static_cast<double>(i.sms)};
  for (std::size_t s = 0; s < space_.slots().size(); ++s) row.push_back(s == i.slot ? 1.0 : 0.0);
  return row;
}

std::vector<double> PartitionProblem::physical_features(std::size_t id) const {
  return roofline_features(partition_, space_.at(id), executor_.gpu());
}

std::vector<Measurement> PartitionProblem::measure(const std::vector<std::size_t>& ids) {
  return measure_repeat(ids, 0);
}

std::vector<Measurement> PartitionProblem::measure_repeat(const std::vector<std::size_t>& ids,
                                                          std::size_t repeat) {
  std::vector<partition::ExecConfig> configs;
  for (std::size_t id : ids) configs.push_back(space_.at(id));
  std::vector<Measurement> out;
  for (const executor::Measurement& m :
       repeat == 0 ? executor_.measure(partition_, configs)
                   : executor_.measure_repeat(partition_, configs, repeat)) {
    out.push_back({m.time, m.total_energy, m.dynamic_energy, m.gpu_cost, false});
  }
  return out;
}

}  // namespace kareus::search
