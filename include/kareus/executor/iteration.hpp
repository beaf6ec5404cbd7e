// One training iteration on the emulator: every pipeline instruction's kernels, the 1F1B DAG's
// longest path (with activation transfers between stages), the data-parallel gradient
// reduction, and the energy of every GPU of the job.
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
  Seconds gradient_reduction_time;              // DP > 1
  std::map<std::string, KernelTotals> kernels;  // with breakdown, keyed "stage/dir/name"
};

IterationResult simulate_iteration(const workload::Workload& w, const Emulator& emulator,
                                   const IterationOptions& options);

// Work of an iteration outside its pipeline instructions, the same whatever the instructions'
// clocks: `time` is what it adds to a path through the DAG, `dynamic_energy` the whole job's.
struct OutsideWork {
  Seconds time;
  Joules dynamic_energy;
};
// One P2P transfer between neighbouring stages (time per transfer); every microbatch crosses
// each stage boundary twice (activation, then its gradient) on every pipeline replica.
OutsideWork pipeline_transfers(const workload::Workload& w, const Emulator& emulator,
                               const ClockPolicy& policy);
// The gradient reduction after the pipeline drains (DP or CP > 1): the slowest stage's time,
// every replica's energy.
OutsideWork gradient_reductions(const workload::Workload& w, const Emulator& emulator,
                                const ClockPolicy& policy);

// Longest path through the 1F1B DAG with per-(stage, direction) instruction times and a delay
// on every edge between stages; the iteration time without the gradient reduction.
Seconds pipeline_makespan(int stages, int microbatches, const std::vector<Seconds>& forward,
                          const std::vector<Seconds>& backward, Seconds transfer);

}  // namespace kareus::emulator
