// SPDX-License-Identifier: Apache-2.0
#include "kareus/scaleout/session.hpp"

#include <fmt/format.h>

#include <csignal>
#include <cstdlib>
#include <map>
#include <string>

#include "dispatch_executor.hpp"
#include "kareus/core/error.hpp"
#include "kareus/partition/partition.hpp"
#include "termination.hpp"
#include "transport.hpp"
#include "wire.hpp"

namespace kareus::scaleout {
namespace {

// Fault injection for the tests: KAREUS_TEST_KILL="RANK:TASKS" makes worker RANK kill itself with
// SIGKILL when its (TASKS+1)-th task arrives, as a node failure would, mid-run and
// deterministically. Returns -1 when this rank is not the one.
long kill_after_tasks(int rank) {
  const char* text = std::getenv("KAREUS_TEST_KILL");
  if (!text) return -1;
  char* end = nullptr;
  const long victim = std::strtol(text, &end, 10);
  if (*end != ':' || victim != rank) return -1;
  return std::strtol(end + 1, nullptr, 10);
}

const partition::Partition& find(const std::vector<partition::Partition>& parts,
                                 const std::string& key) {
  for (const auto& p : parts)
    if (p.key == key) return p;
  throw Error(fmt::format("no partition {} in the workload", key));
}

}  // namespace

Session::Session() {
  const Launch launch = detect_launch();
  require_mpi_for(launch, transport::available());
  if (launch.size <= 1) return;
  transport::init();
  mpi_ = true;
  rank_ = transport::rank();
  size_ = transport::size();
  if (coordinator()) install_termination_handler();
}

Session::~Session() {
  // MPI_Finalize waits for every rank; after a rank died it would wait for ever.
  if (!mpi_ || termination_requested() || transport::broken()) return;
  if (coordinator()) {
    for (int r = 1; r < size_; ++r) {
      try {
        transport::send(r, transport::kStop, {});
      } catch (const std::exception&) {
        // A dead worker needs no stop; the launcher reports it.
      }
    }
  }
  transport::finalize();
}

void Session::serve(const std::vector<workload::Workload>& workloads,
                    const ExecutorFactory& make) const {
  std::map<std::size_t, std::unique_ptr<executor::Executor>> executors;
  std::map<std::size_t, std::vector<partition::Partition>> partitions;
  const long kill_after = kill_after_tasks(rank_);
  for (long tasks = 0;; ++tasks) {
    const transport::Message m = *transport::receive(0);
    if (m.tag == transport::kStop) return;
    if (tasks == kill_after) std::raise(SIGKILL);
    // Only the measuring may fail into a report; a failed send has nobody to report to.
    std::string result;
    std::string failure;
    try {
      if (m.tag != transport::kTask) throw Error(fmt::format("unexpected message tag {}", m.tag));
      const wire::Task task = wire::decode_task(m.bytes);
      if (task.workload >= workloads.size())
        throw Error(fmt::format("workload {} of {}", task.workload, workloads.size()));
      const workload::Workload& w = workloads[task.workload];
      auto& exec = executors[task.workload];
      if (!exec) exec = make(w);
      auto& parts = partitions[task.workload];
      if (parts.empty()) parts = partition::representative_partitions(w);
      result = wire::encode(exec->measure(find(parts, task.partition), task.configs));
    } catch (const std::exception& e) {
      failure = e.what();
    }
    if (failure.empty()) {
      transport::send(0, transport::kResult, result);
    } else {
      transport::send(0, transport::kFailure, failure);
    }
  }
}

std::unique_ptr<executor::Executor> Session::executor(std::size_t workload_index,
                                                      std::unique_ptr<executor::Executor> local,
                                                      MeasuredSink sink) const {
  if (size_ <= 1) return local;
  return std::make_unique<DispatchExecutor>(size_, workload_index, std::move(local),
                                            std::move(sink));
}

}  // namespace kareus::scaleout
