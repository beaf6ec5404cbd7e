// SPDX-License-Identifier: Apache-2.0
// One kareus process among the ranks of an MPI job (mpirun, srun). Rank 0 is the coordinator: it
// runs the single-process search and planner unchanged, owns the measurement store, and hands
// each batch of configurations to a DispatchExecutor that spreads it over every rank. The other
// ranks are workers: they measure what they are sent on their own executor and send the readings
// back. Decisions are taken only on rank 0 from readings put back in batch order, so the answer
// does not depend on which rank finished first.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "kareus/executor/executor.hpp"
#include "kareus/scaleout/launch.hpp"
#include "kareus/workload/workload.hpp"

namespace kareus::scaleout {

// The rank's own executor for a workload; every rank must build the same kind with the same
// settings, so that a configuration reads the same wherever it is measured.
using ExecutorFactory =
    std::function<std::unique_ptr<executor::Executor>(const workload::Workload&)>;

// Called on the coordinator when the job is stopped mid-batch (a rank died), with each piece of
// the batch whose readings had arrived, so that they are committed before the process exits.
// Complete batches are committed by the search's store as in one process. `executor` is the
// coordinator's local executor (its name keys the store).
using MeasuredSink =
    std::function<void(const executor::Executor& executor, const partition::Partition& p,
                       const std::vector<partition::ExecConfig>& configs,
                       const std::vector<executor::Measurement>& readings)>;

class Session {
 public:
  // Joins the MPI job when launched as more than one rank; otherwise a session of one that
  // touches no MPI at all. Throws kareus::Error for a multi-rank launch of a build without MPI.
  Session();
  // The coordinator tells every worker to stop; then MPI is finalised.
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool coordinator() const { return rank_ == 0; }

  // Worker ranks: measures the tasks the coordinator sends until it says stop. `workloads` are
  // those of the command line, resolved the same way on every rank; a task names one by index.
  void serve(const std::vector<workload::Workload>& workloads, const ExecutorFactory& make) const;

  // Coordinator: the executor the search should use for workloads[workload_index]. With one rank
  // this is `local` itself, so a single-process run is exactly what it was.
  std::unique_ptr<executor::Executor> executor(std::size_t workload_index,
                                               std::unique_ptr<executor::Executor> local,
                                               MeasuredSink sink = {}) const;

 private:
  int rank_ = 0;
  int size_ = 1;
  bool mpi_ = false;
};

}  // namespace kareus::scaleout
