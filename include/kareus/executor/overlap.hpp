// SPDX-License-Identifier: Apache-2.0
// The kernel-pair what-if behind `kareus overlap`: one compute kernel and one collective on the
// same GPU, alone, back to back and overlapped (launched together, the collective on a given
// number of SMs), with the time, power and energy of each.
#pragma once

#include <optional>

#include "kareus/core/units.hpp"
#include "kareus/executor/emulator.hpp"
#include "kareus/executor/executor.hpp"
#include "kareus/partition/partition.hpp"
#include "kareus/workload/kernels.hpp"

namespace kareus::executor {

struct RunFigures {
  Seconds time;
  Joules energy;  // board energy, static included
  Watts power() const { return energy / time; }
};

struct OverlapReport {
  int comm_sms = 0;
  RunFigures compute_alone;     // on the whole GPU
  RunFigures collective_alone;  // on comm_sms SMs
  RunFigures serial;            // compute, then the collective
  RunFigures overlapped;        // both launched together, until both are done
  // While both run: each kernel's time / its time alone, the clock after the power limit and
  // the board power. Only the emulator can separate them; a measurement sees the totals.
  std::optional<double> compute_stretch;
  std::optional<double> collective_stretch;
  std::optional<MHz> overlap_clock;
  std::optional<Watts> overlap_power;
};

// The three partitions a measurement of the pair runs: the compute kernel alone, the collective
// alone, and both with two launch slots, "together" (overlapped) and "after" (serial).
struct PairPartitions {
  partition::Partition compute_alone;
  partition::Partition collective_alone;
  partition::Partition pair;
};
PairPartitions pair_partitions(const workload::Kernel& compute, const workload::Kernel& comm);

// On the emulator, with the co-run phase's stretches.
OverlapReport emulate_overlap(const emulator::Emulator& emu, const workload::Kernel& compute,
                              const workload::Kernel& comm, int comm_sms,
                              const emulator::ClockPolicy& policy);

// Through any executor's measurement protocol (the CUDA executor on a real GPU), at `clock`.
OverlapReport measure_overlap(Executor& executor, const workload::Kernel& compute,
                              const workload::Kernel& comm, int comm_sms, MHz clock);

}  // namespace kareus::executor
