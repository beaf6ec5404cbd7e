// SPDX-License-Identifier: Apache-2.0
// Per-kernel DVFS study of one kernel sequence: for each slowdown bound, the kernel-level plan
// (realisable with switch costs, and ideal as in Spaan et al.), against the max-clock, default
// governor and one-clock-per-pass baselines on the same data.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kareus/core/json.hpp"
#include "kareus/core/units.hpp"
#include "kareus/frontier/step_sequence.hpp"
#include "kareus/kernel_dvfs/profile.hpp"

namespace kareus::kernel_dvfs {

enum class Reference { kMaxClock, kGovernor };
const char* to_string(Reference r);  // "max_clock" | "governor"

struct StudyOptions {
  std::vector<double> slowdowns{0.006};  // fractions of the reference time
  Reference reference = Reference::kMaxClock;
  // Enables the default-governor baseline: the firmware keeps each kernel at the highest clock
  // whose average power fits under this limit.
  std::optional<Watts> power_limit;
  bool ideal = false;              // ignore switching costs, as the paper does
  frontier::SwitchCost switching;  // used unless ideal
  std::string switching_source;
  Seconds min_dwell;  // kernels are grouped into phases lasting at least this long
  std::size_t time_bins = 4000;
  bool curve = false;  // compute the Lagrangian energy-time curve
};

struct Outcome {
  bool feasible = false;
  frontier::SequenceCost cost;
  std::vector<std::size_t> kernel_clock;  // clock index per kernel
  double energy_saving = 0;               // 1 - E / E(max clock)
  double slowdown = 0;                    // T / T(max clock) - 1
};

struct BoundResult {
  double bound = 0;
  Seconds time_budget;
  Outcome kernel_level;                 // with switch costs unless ideal
  std::optional<Outcome> kernel_ideal;  // the same without switch costs, when not ideal
  Outcome pass_level;
  std::size_t phases = 0;
  Seconds quantum;
  Seconds quantisation_loss;
};

struct StudyResult {
  Outcome max_clock;
  std::optional<Outcome> governor;  // absent without StudyOptions::power_limit
  Seconds reference_time;
  std::vector<BoundResult> bounds;
  std::vector<frontier::CurvePoint> curve;
  std::vector<std::string> notes;
};

StudyResult run_study(const KernelSequence& sequence, const StudyOptions& options);

// The --json document: first bound's figures at the top level, every bound under "results".
Json study_json(const KernelSequence& sequence, const StudyOptions& options,
                const StudyResult& result, bool with_plan);
// Human-readable report.
std::string study_text(const KernelSequence& sequence, const StudyOptions& options,
                       const StudyResult& result, bool with_plan);

}  // namespace kareus::kernel_dvfs
