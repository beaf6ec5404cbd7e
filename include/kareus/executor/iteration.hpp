// SPDX-License-Identifier: Apache-2.0
// One training iteration on the emulator: every pipeline instruction's kernels, the 1F1B DAG's
// longest path (with activation transfers between stages), the data-parallel gradient
// reduction and the optimizer step, and the energy of every GPU of the job.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kareus/executor/emulator.hpp"
#include "kareus/workload/workload.hpp"

namespace kareus::emulator {

enum class Execution { kSequential, kNanobatch };
const char* to_string(Execution e);  // "sequential" | "nanobatch"

struct IterationOptions {
  ClockPolicy clock = ClockPolicy::locked_at(MHz(0));  // MHz(0): the GPU's max clock
  Execution execution = Execution::kSequential;
  bool breakdown = false;  // collect per-kernel totals
};

struct KernelTotals {
  std::string kind;
  int stage = 0;
  std::string direction;
  double count = 0;  // per GPU per iteration
  Seconds time;
  Joules dynamic_energy;
};

struct InstructionResult {
  int stage = 0;
  workload::Direction direction = workload::Direction::kForward;
  RunResult run;  // one GPU of the stage, one microbatch
};

// Where one iteration's energy and time went, for the whole job. The energy parts add up to the
// job's energy (static power x iteration time x GPUs + dynamic energy), the time parts, in
// GPU-seconds, to iteration time x GPUs. "Static" and "waits" follow the Kareus/Perseus
// convention that a GPU draws its blocked power (GpuSpec::static_power) whatever it does;
// "idle" is what the board's idle power at the clock it runs adds to that (negative at clocks
// where it is below the blocked power).
struct JobLedger {
  Joules static_energy;       // blocked power x the GPU-seconds the GPUs work
  Joules idle;                // (idle power at the clock - blocked power) over that work
  Joules compute_dynamic;     // compute kernels above idle
  Joules collective_dynamic;  // collectives (P2P transfers included) above idle
  Joules pipeline_waits;      // blocked power x the GPU-seconds the GPUs wait
  Seconds compute_time;       // GPU-seconds: compute alone
  Seconds overlap_time;       // compute with a collective beside it
  Seconds collective_time;    // exposed communication, P2P transfers included
  Seconds launch_gap_time;    // between kernels
  Seconds wait_time;          // pipeline bubbles and waiting for the slowest stage
  Joules total() const;
  Seconds gpu_time() const;
};

struct IterationResult {
  Seconds iteration_time;
  // Whole job (all GPUs).
  Joules dynamic_energy;
  Joules static_energy;
  Joules total_energy() const { return dynamic_energy + static_energy; }
  int gpus = 0;
  MHz average_clock;                            // busy-time-weighted over instructions
  std::vector<InstructionResult> instructions;  // per (stage, direction)
  Seconds pipeline_transfer_time;               // per activation transfer
  Seconds gradient_reduction_time;              // DP or CP > 1, the slowest stage's
  Seconds optimizer_time;                       // the slowest stage's optimizer step
  std::map<std::string, KernelTotals> kernels;  // with breakdown, keyed "stage/dir/name"
  JobLedger ledger;
};

IterationResult simulate_iteration(const workload::Workload& w, const Emulator& emulator,
                                   const IterationOptions& options);

// Work of an iteration outside its pipeline instructions, the same whatever the instructions'
// clocks: `time` is what it adds to a path through the DAG, `dynamic_energy` the whole job's.
struct OutsideWork {
  Seconds time;
  Joules dynamic_energy;
  RunLedger ledger;  // the whole job's: energy of every GPU, time in GPU-seconds
};
// One P2P transfer between neighbouring stages (time per transfer); every microbatch crosses
// each stage boundary twice (activation, then its gradient) on every pipeline replica.
OutsideWork pipeline_transfers(const workload::Workload& w, const Emulator& emulator,
                               const ClockPolicy& policy);
// The end of the iteration after the pipeline drains: each stage's gradient reduction (DP or
// CP > 1), then its optimizer step. `time` is the slowest stage's, `dynamic_energy` every GPU's;
// `gradient_reduction` and `optimizer` are the slowest stage's two parts.
struct IterationTail : OutsideWork {
  Seconds gradient_reduction;
  Seconds optimizer;
};
IterationTail iteration_tail(const workload::Workload& w, const Emulator& emulator,
                             const ClockPolicy& policy);

// A ledger's parts times n (n runs, or n GPUs).
RunLedger scaled(const RunLedger& l, double n);

// The ledger of an iteration from one GPU's run of each (stage, direction) instruction for one
// microbatch, the work outside the instructions and the iteration time.
JobLedger job_ledger(const workload::Workload& w,
                     const std::vector<InstructionResult>& instructions, const OutsideWork& tail,
                     const OutsideWork& transfers, Seconds iteration_time);

// Longest path through the 1F1B DAG with per-(stage, direction) instruction times and a delay
// on every edge between stages; the iteration time without the gradient reduction.
Seconds pipeline_makespan(int stages, int microbatches, const std::vector<Seconds>& forward,
                          const std::vector<Seconds>& backward, Seconds transfer);

}  // namespace kareus::emulator
