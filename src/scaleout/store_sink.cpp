// SPDX-License-Identifier: Apache-2.0
#include "kareus/scaleout/store_sink.hpp"

#include "kareus/store/partition_search.hpp"

namespace kareus::scaleout {

MeasuredSink commit_to(store::Store& store, const workload::Workload& w) {
  return [&store, w](const executor::Executor& executor, const partition::Partition& p,
                     const std::vector<partition::ExecConfig>& configs,
                     const std::vector<executor::Measurement>& readings) {
    std::vector<store::Record> records;
    for (std::size_t i = 0; i < configs.size(); ++i) {
      const auto& m = readings[i];
      records.push_back(
          {configs[i].key(), {m.time, m.total_energy, m.dynamic_energy, m.gpu_cost, false}});
    }
    store.put_batch(store::scope_of(w, executor, p.key), records);
  };
}

}  // namespace kareus::scaleout
