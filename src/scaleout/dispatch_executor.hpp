// SPDX-License-Identifier: Apache-2.0
// The coordinator's executor in a multi-rank job: each batch is sorted by clock (as the emulator
// and the CUDA executor measure it, one settle per clock) and cut into one contiguous piece per
// rank; rank 0 measures its own piece while the workers measure theirs, and the readings are put
// back in the order asked, so the search sees exactly what one process would have measured.
#pragma once

#include <memory>

#include "kareus/scaleout/session.hpp"

namespace kareus::scaleout {

class DispatchExecutor : public executor::Executor {
 public:
  DispatchExecutor(int ranks, std::size_t workload_index, std::unique_ptr<executor::Executor> local,
                   MeasuredSink sink);

  // The local executor's name and GPU: the store keys measurements by them, so a later
  // single-process run finds what this job measured.
  std::string name() const override { return local_->name(); }
  const GpuSpec& gpu() const override { return local_->gpu(); }
  const executor::MeasurementProtocol& protocol() const override { return local_->protocol(); }
  std::vector<executor::Measurement> measure(
      const partition::Partition& p, const std::vector<partition::ExecConfig>& configs) override;
  // Repeats are few and come one small batch at a time: measured here, by the local executor.
  std::vector<executor::Measurement> measure_repeat(
      const partition::Partition& p, const std::vector<partition::ExecConfig>& configs,
      std::size_t repeat) override {
    return repeat == 0 ? measure(p, configs) : local_->measure_repeat(p, configs, repeat);
  }

 private:
  int ranks_;
  std::size_t workload_index_;
  std::unique_ptr<executor::Executor> local_;
  MeasuredSink sink_;
};

}  // namespace kareus::scaleout
