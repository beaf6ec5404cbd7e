// SPDX-License-Identifier: Apache-2.0
#include "kareus/kernel_dvfs/study.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kareus/core/error.hpp"

namespace kareus::kernel_dvfs {

const char* to_string(Reference r) {
  return r == Reference::kGovernor ? "governor" : "max_clock";
}
namespace {

Outcome outcome_of(const KernelSequence& sequence, std::span<const Phase> phases,
                   const frontier::SequencePlan& plan) {
  Outcome out;
  out.feasible = plan.feasible;
  if (!plan.feasible) return out;
  out.cost = plan.cost;
  out.kernel_clock = kernel_clocks(sequence, phases, plan.choice);
  return out;
}

Outcome fixed_outcome(const KernelSequence& sequence, std::vector<std::size_t> clocks) {
  const auto phases = kernel_phases(sequence);
  const auto steps = phase_steps(sequence, phases);
  Outcome out;
  out.feasible = true;
  // Clock changes made by the firmware are not charged: they are part of its measured behaviour.
  out.cost = frontier::evaluate_choice(steps, clocks, frontier::SwitchCost{});
  out.kernel_clock = std::move(clocks);
  return out;
}

void keep_better(Outcome& out, const Outcome& tighter) {
  if (tighter.feasible && (!out.feasible || tighter.cost.energy < out.cost.energy)) out = tighter;
}

void relate_to(Outcome& out, const Outcome& max_clock) {
  if (!out.feasible) return;
  out.energy_saving = 1.0 - out.cost.energy / max_clock.cost.energy;
  out.slowdown = out.cost.time / max_clock.cost.time - 1.0;
}

// The firmware governor lowers the clock only when the power limit binds, so each kernel runs at
// the highest clock whose average power fits (the lowest clock if none does).
std::vector<std::size_t> governor_clocks(const KernelSequence& sequence, Watts limit) {
  std::vector<std::size_t> clocks;
  for (const auto& kernel : sequence.kernels) {
    std::size_t chosen = 0;
    for (std::size_t c = sequence.clocks.size(); c-- > 0;) {
      if (kernel.energy[c] / kernel.time[c] <= limit) {
        chosen = c;
        break;
      }
    }
    clocks.push_back(chosen);
  }
  return clocks;
}

}  // namespace

StudyResult run_study(const KernelSequence& sequence, const StudyOptions& options) {
  validate(sequence);
  if (options.slowdowns.empty()) throw Error("no slowdown bound given");
  for (double s : options.slowdowns)
    require(std::isfinite(s) && s >= 0, "kernel-dvfs", "slowdown", format_number(s),
            "must be a fraction >= 0 (0.006 = 0.6 %)");

  StudyResult result;
  result.max_clock = fixed_outcome(
      sequence, std::vector<std::size_t>(sequence.kernels.size(), sequence.max_clock()));
  relate_to(result.max_clock, result.max_clock);
  if (options.power_limit) {
    result.governor = fixed_outcome(sequence, governor_clocks(sequence, *options.power_limit));
    relate_to(*result.governor, result.max_clock);
  }
  if (options.reference == Reference::kGovernor && !result.governor)
    throw Error(fmt::format("{} governor needs the GPU's power limit ({})", field_ref("reference"),
                            field_ref("power_limit")));
  result.reference_time = options.reference == Reference::kGovernor ? result.governor->cost.time
                                                                    : result.max_clock.cost.time;

  const frontier::SwitchCost none;
  const frontier::SwitchCost& switching = options.ideal ? none : options.switching;
  const auto kernel_level = options.min_dwell.value() > 0
                                ? dwell_phases(sequence, options.min_dwell)
                                : kernel_phases(sequence);
  const auto kernel_steps = phase_steps(sequence, kernel_level);
  const auto single = kernel_phases(sequence);
  const auto single_steps = phase_steps(sequence, single);
  const auto passes = pass_phases(sequence);
  const auto pass_steps = phase_steps(sequence, passes);
  if (!sequence.has_passes())
    result.notes.push_back(
        "the profile has no forward/backward labels, so the pass-level baseline uses one clock "
        "for the whole sequence");

  // Each bound gets its own quantum, so a looser bound could round away a plan that a tighter one
  // found; carrying the best plan forward in order of bound keeps savings monotone.
  std::vector<std::size_t> order(options.slowdowns.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return options.slowdowns[a] < options.slowdowns[b];
  });
  result.bounds.resize(options.slowdowns.size());
  const BoundResult* tighter = nullptr;
  for (std::size_t i : order) {
    BoundResult& r = result.bounds[i];
    r.bound = options.slowdowns[i];
    r.time_budget = result.reference_time * (1.0 + r.bound);
    frontier::SequenceBudget plan_options;
    plan_options.time_budget = r.time_budget;
    plan_options.time_bins = options.time_bins;

    const frontier::SequencePlan plan =
        frontier::plan_min_energy(kernel_steps, switching, plan_options);
    r.kernel_level = outcome_of(sequence, kernel_level, plan);
    r.phases = kernel_steps.size();
    r.quantum = plan.quantum;
    r.quantisation_loss = plan.quantisation_loss;
    if (!options.ideal)
      r.kernel_ideal =
          outcome_of(sequence, single, frontier::plan_min_energy(single_steps, none, plan_options));
    r.pass_level = outcome_of(sequence, passes,
                              frontier::plan_min_energy(pass_steps, switching, plan_options));
    if (tighter) {
      keep_better(r.kernel_level, tighter->kernel_level);
      if (r.kernel_ideal) keep_better(*r.kernel_ideal, *tighter->kernel_ideal);
      keep_better(r.pass_level, tighter->pass_level);
    }
    relate_to(r.kernel_level, result.max_clock);
    if (r.kernel_ideal) relate_to(*r.kernel_ideal, result.max_clock);
    relate_to(r.pass_level, result.max_clock);
    tighter = &r;
  }
  if (options.curve) result.curve = frontier::lagrangian_curve(single_steps);
  return result;
}

}  // namespace kareus::kernel_dvfs
