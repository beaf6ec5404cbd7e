// SPDX-License-Identifier: Apache-2.0
// A kernel sequence with each kernel's time and energy at every allowed clock: the input of
// per-kernel DVFS, whether it comes from a measured CSV, a scaled profiler trace or the emulator.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kareus/core/units.hpp"
#include "kareus/frontier/step_sequence.hpp"
#include "kareus/workload/pipeline.hpp"

namespace kareus::kernel_dvfs {

using workload::Direction;

// A kernel's pass, when the profile says (unset: unknown), and its name in reports.
std::string_view pass_name(std::optional<Direction> pass);

struct KernelProfile {
  std::string name;
  std::optional<Direction> pass;
  // Indexed like KernelSequence::clocks.
  std::vector<Seconds> time;
  std::vector<Joules> energy;
};

struct KernelSequence {
  std::vector<MHz> clocks;  // ascending; the last is the maximum clock
  std::vector<KernelProfile> kernels;
  std::string source;
  // How the figures were obtained when not measured at every clock (shown in every output).
  std::vector<std::string> notes;

  std::size_t max_clock() const { return clocks.size() - 1; }
  bool has_passes() const;
};

// Throws unless clocks ascend, every kernel has a positive time and energy at each clock.
void validate(const KernelSequence& sequence);

// A run of consecutive kernels [first, end) that is given one clock.
struct Phase {
  std::size_t first = 0;
  std::size_t end = 0;
};

// One phase per kernel.
std::vector<Phase> kernel_phases(const KernelSequence& sequence);
// Consecutive kernels grouped until a group lasts at least `min_dwell` at the maximum clock (a
// lower clock only lengthens a group of these kernels); a short tail joins the group before it.
std::vector<Phase> dwell_phases(const KernelSequence& sequence, Seconds min_dwell);
// Maximal runs of kernels of the same pass: one clock per forward and per backward pass.
std::vector<Phase> pass_phases(const KernelSequence& sequence);

// One planner step per phase; option c runs the whole phase at clocks[c].
std::vector<frontier::Step> phase_steps(const KernelSequence& sequence,
                                        std::span<const Phase> phases);
// The clock index of every kernel when phase p runs at option choice[p].
std::vector<std::size_t> kernel_clocks(const KernelSequence& sequence,
                                       std::span<const Phase> phases,
                                       std::span<const std::size_t> choice);

}  // namespace kareus::kernel_dvfs
