// SPDX-License-Identifier: Apache-2.0
// `kareus compare --plan DIR --measured FILE...`: a plan against what the runtime measured while
// it played the plan's schedule (measurement records, one per rank, docs/measurement-format.md):
// per stage and instruction kind, per iteration for the whole job, and where the difference
// comes from (time or energy; in the instructions or in the waits between them). A rank whose
// clocks run below the others' (a throttled GPU) or whose instructions take longer than the
// others' (a straggler) is named and kept out of the per-kind figures, not averaged into them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kareus/core/json.hpp"
#include "kareus/plan_dir/plan_files.hpp"

namespace kareus::report {

// Predicted and measured values of one quantity; measured is a median.
struct Versus {
  double predicted = 0;
  double measured = 0;
  double error() const { return predicted > 0 ? measured / predicted - 1 : 0; }
};

// One stage's instructions of one kind ("forward sequential", "backward nanobatch").
struct KindRow {
  int stage = 0;
  std::string kind;
  std::size_t spans = 0;         // measured, over ranks and iterations
  Versus time;                   // s, one instruction
  std::optional<Versus> energy;  // J, one instruction on one GPU; absent without a prediction
  bool includes_waits = false;   // no span had its end reported: spans run to the next one
};

// Where a rank's iteration went: its instructions, and the rest (pipeline waits, work outside
// the instructions such as the optimizer step).
struct RankSplit {
  int rank = 0;
  int stage = 0;
  Versus busy;                        // s per iteration in instructions
  Versus rest;                        // s per iteration outside them
  std::optional<Versus> busy_energy;  // J per iteration on this GPU
};

struct Outlier {
  int rank = 0;
  int stage = 0;
  std::string gpu_uuid;
  std::string what;  // "throttled" | "straggler" | "power limit"
  std::string detail;
};

struct MeasuredComparison {
  std::string workload;  // one line
  std::string method;
  std::vector<std::string> files;
  int job_gpus = 0;
  int ranks = 0;
  int iterations = 0;                // complete on every rank
  Versus iteration_time;             // s: the slowest rank's iteration
  std::optional<Versus> job_energy;  // J per iteration, every GPU (ranks scaled to their stage)
  // Of the job energy's error, the part in the instructions and the part outside them.
  std::optional<double> energy_error_instructions;  // J
  std::optional<double> energy_error_outside;       // J
  std::vector<KindRow> kinds;
  std::vector<RankSplit> ranks_split;
  std::vector<Outlier> outliers;
  std::vector<std::string> notes;  // a killed job, stages not recorded, ...

  // "iteration +4.1 % time, +7.9 % energy; most of the energy error in the instructions ..."
  std::string explanation() const;
};

// The plan's schedule against every record; a record of another schedule (another plan or
// another workload) is refused, naming the file. Throws kareus::Error.
MeasuredComparison compare_measured(const plan_dir::PlanFiles& plan,
                                    const std::vector<std::string>& records);

std::string render_text(const MeasuredComparison& c);
Json to_json(const MeasuredComparison& c);

}  // namespace kareus::report
