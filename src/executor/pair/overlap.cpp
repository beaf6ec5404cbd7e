// SPDX-License-Identifier: Apache-2.0
#include "kareus/executor/overlap.hpp"

#include "kareus/core/error.hpp"

namespace kareus::executor {

using workload::Kernel;

PairPartitions pair_partitions(const Kernel& compute, const Kernel& comm) {
  PairPartitions out;
  out.compute_alone.key = "compute_alone";
  out.compute_alone.compute = {compute};
  out.compute_alone.slots = {{"together", 0}};
  out.collective_alone.key = "collective_alone";
  out.collective_alone.comm = comm;
  out.collective_alone.slots = {{"together", 0}};
  out.collective_alone.launch_options = out.collective_alone.slots;
  out.pair.key = "pair";
  out.pair.compute = {compute};
  out.pair.comm = comm;
  // Launch index 1 = after the only compute kernel: back to back on the same SMs.
  out.pair.slots = {{"together", 0}, {"after", 1}};
  out.pair.launch_options = out.pair.slots;
  return out;
}

namespace {

RunFigures figures(const emulator::RunResult& r) {
  return {r.time, r.total_energy()};
}
RunFigures figures(const Measurement& m) {
  return {m.time, m.total_energy};
}

}  // namespace

OverlapReport emulate_overlap(const emulator::Emulator& emu, const Kernel& compute,
                              const Kernel& comm, int comm_sms,
                              const emulator::ClockPolicy& policy) {
  OverlapReport r;
  r.comm_sms = comm_sms;
  const Kernel pair[] = {compute, comm};
  r.compute_alone = figures(emu.run_kernel(compute, policy));
  r.collective_alone = figures(emu.run_sequential(std::span(pair + 1, 1), policy, comm_sms));
  r.serial = figures(emu.run_sequential(std::span(pair, 2), policy, comm_sms));
  const emulator::PartitionProgram together{std::span(pair, 1), &pair[1], comm_sms, 0};
  r.overlapped = figures(emu.run_partition(together, policy));
  const emulator::CoRun co = emu.co_run(compute, comm, comm_sms, policy);
  r.compute_stretch = co.compute_duration / r.compute_alone.time;
  r.collective_stretch = co.comm_duration / r.collective_alone.time;
  r.overlap_clock = co.clock;
  r.overlap_power = co.power;
  return r;
}

OverlapReport measure_overlap(Executor& executor, const Kernel& compute, const Kernel& comm,
                              int comm_sms, MHz clock) {
  const PairPartitions parts = pair_partitions(compute, comm);
  OverlapReport r;
  r.comm_sms = comm_sms;
  const auto config = [&](const char* slot) {
    return partition::ExecConfig{slot, comm_sms, clock};
  };
  r.compute_alone = figures(executor.measure(parts.compute_alone, {config("together")}).at(0));
  r.collective_alone =
      figures(executor.measure(parts.collective_alone, {config("together")}).at(0));
  const auto both = executor.measure(parts.pair, {config("together"), config("after")});
  r.overlapped = figures(both.at(0));
  r.serial = figures(both.at(1));
  return r;
}

}  // namespace kareus::executor
