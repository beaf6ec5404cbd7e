// SPDX-License-Identifier: Apache-2.0
#include "kareus/kernel_dvfs/profile.hpp"

#include <fmt/format.h>

#include <cmath>

#include "kareus/core/error.hpp"

namespace kareus::kernel_dvfs {

std::string_view pass_name(std::optional<Direction> pass) {
  return pass ? workload::to_string(*pass) : "unknown";
}

bool KernelSequence::has_passes() const {
  for (const auto& k : kernels)
    if (k.pass != std::nullopt) return true;
  return false;
}

void validate(const KernelSequence& sequence) {
  const std::string& where = sequence.source;
  if (sequence.clocks.empty()) throw Error(where + ": no clocks");
  if (sequence.kernels.empty()) throw Error(where + ": no kernels");
  for (std::size_t c = 0; c < sequence.clocks.size(); ++c) {
    const double f = sequence.clocks[c].value();
    require(f > 0, where, "clock_mhz", format_number(f), "must be > 0");
    if (c > 0)
      require(f > sequence.clocks[c - 1].value(), where, "clock_mhz", format_number(f),
              "clocks must be distinct and ascending");
  }
  for (const auto& k : sequence.kernels) {
    if (k.time.size() != sequence.clocks.size() || k.energy.size() != sequence.clocks.size())
      throw Error(fmt::format("{}: kernel '{}' has {} times and {} energies for {} clocks", where,
                              k.name, k.time.size(), k.energy.size(), sequence.clocks.size()));
    for (std::size_t c = 0; c < sequence.clocks.size(); ++c) {
      const std::string field =
          fmt::format("kernel '{}' at {} MHz", k.name, format_number(sequence.clocks[c].value()));
      require(std::isfinite(k.time[c].value()) && k.time[c].value() > 0, where, field + " time_s",
              format_number(k.time[c].value()), "must be a finite number > 0");
      require(std::isfinite(k.energy[c].value()) && k.energy[c].value() > 0, where,
              field + " energy_j", format_number(k.energy[c].value()),
              "must be a finite number > 0");
    }
  }
}

std::vector<Phase> kernel_phases(const KernelSequence& sequence) {
  std::vector<Phase> phases;
  for (std::size_t k = 0; k < sequence.kernels.size(); ++k) phases.push_back({k, k + 1});
  return phases;
}

std::vector<Phase> dwell_phases(const KernelSequence& sequence, Seconds min_dwell) {
  std::vector<Phase> phases;
  Seconds open{0};
  std::size_t first = 0;
  for (std::size_t k = 0; k < sequence.kernels.size(); ++k) {
    open += sequence.kernels[k].time[sequence.max_clock()];
    if (open >= min_dwell) {
      phases.push_back({first, k + 1});
      first = k + 1;
      open = Seconds(0);
    }
  }
  if (first < sequence.kernels.size()) {
    if (phases.empty())
      phases.push_back({first, sequence.kernels.size()});
    else
      phases.back().end = sequence.kernels.size();
  }
  return phases;
}

std::vector<Phase> pass_phases(const KernelSequence& sequence) {
  std::vector<Phase> phases;
  for (std::size_t k = 0; k < sequence.kernels.size(); ++k) {
    if (k > 0 && sequence.kernels[k].pass == sequence.kernels[k - 1].pass)
      phases.back().end = k + 1;
    else
      phases.push_back({k, k + 1});
  }
  return phases;
}

std::vector<frontier::Step> phase_steps(const KernelSequence& sequence,
                                        std::span<const Phase> phases) {
  std::vector<frontier::Step> steps;
  for (const auto& phase : phases) {
    frontier::Step step;
    step.name = sequence.kernels[phase.first].name;
    if (phase.end - phase.first > 1)
      step.name += fmt::format(" .. {}", sequence.kernels[phase.end - 1].name);
    for (std::size_t c = 0; c < sequence.clocks.size(); ++c) {
      frontier::StepOption option{c, Seconds(0), Joules(0)};
      for (std::size_t k = phase.first; k < phase.end; ++k) {
        option.time += sequence.kernels[k].time[c];
        option.energy += sequence.kernels[k].energy[c];
      }
      step.options.push_back(option);
    }
    steps.push_back(std::move(step));
  }
  return steps;
}

std::vector<std::size_t> kernel_clocks(const KernelSequence& sequence,
                                       std::span<const Phase> phases,
                                       std::span<const std::size_t> choice) {
  std::vector<std::size_t> clocks(sequence.kernels.size(), sequence.max_clock());
  for (std::size_t p = 0; p < phases.size(); ++p)
    for (std::size_t k = phases[p].first; k < phases[p].end; ++k) clocks[k] = choice[p];
  return clocks;
}

}  // namespace kareus::kernel_dvfs
