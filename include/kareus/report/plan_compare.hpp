// SPDX-License-Identifier: Apache-2.0
// `kareus compare`: two plans of a plan directory (or of two directories of the same workload)
// side by side, their iteration time and energy split term by term from the ledgers summary.json
// carries, so that the difference between them says where it comes from.
#pragma once

#include <string>
#include <vector>

#include "kareus/core/json.hpp"
#include "kareus/plan_dir/plan_files.hpp"

namespace kareus::report {

// One side of a comparison: a method's max-throughput point ("kareus", "kareus:fastest"), its
// least-energy point ("kareus:min-energy"), the selected plan ("selected") or a plan by its id
// in the method's frontier ("kareus:2495").
struct PlanRef {
  std::string method;  // empty for "selected"
  std::string which;   // "fastest", "min-energy", "selected" or a plan id
};
// Throws kareus::Error (invalid input) naming `where` when `text` is not of that form.
PlanRef parse_plan_ref(const std::string& text, const std::string& where);

// A named part of a ledger: its value in each plan and the difference.
struct LedgerTerm {
  std::string name;
  std::string unit;  // "J" or "s" (GPU-seconds)
  double a = 0;
  double b = 0;
};

struct PlanComparison {
  std::string workload;  // one line: model, GPUs, parallelism
  std::string label_a, label_b;
  double time_a = 0, time_b = 0;      // iteration time, s
  double energy_a = 0, energy_b = 0;  // reported energy, J
  std::vector<LedgerTerm> energy;     // the energy ledger's five parts
  std::vector<LedgerTerm> gpu_time;   // the time ledger's parts, GPU-seconds
  // The ledger replays each plan on the noise-free emulator; the planner's figures come from
  // its measurements. What the ledger's total differs from the reported energy by.
  double replay_residual_a = 0, replay_residual_b = 0;
  // "kareus fastest vs perseus fastest: -0.50 s; +1.2 kJ compute dynamic, ...": the largest
  // terms first.
  std::string explanation() const;
};

// Reads the two plans from the summary.json of `files_a` and `files_b` (the same files for two
// plans of one run). Throws kareus::Error when a plan has no summary.json with ledgers, when the
// two plan different workloads, or when a method or plan id is unknown.
PlanComparison compare_plans(const plan_dir::PlanFiles& files_a, const PlanRef& a,
                             const plan_dir::PlanFiles& files_b, const PlanRef& b);

std::string render_text(const PlanComparison& c);
Json to_json(const PlanComparison& c);

}  // namespace kareus::report
