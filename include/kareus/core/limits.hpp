// SPDX-License-Identifier: Apache-2.0
// The bounds on what an input may ask for: one per quantity, each checked before the work or the
// memory it would cost, each far beyond any real job. docs/hardening.md lists them with the
// commands and files they apply to.
#pragma once

#include <cstdint>
#include <string_view>

namespace kareus {

// Bytes of one input file (JSON or CSV), checked before it is read: every reader keeps the whole
// text and its parsed form in memory.
inline constexpr std::uintmax_t kMaxInputFileBytes = std::uintmax_t{1} << 30;

// Instructions of one training iteration, 2 x stages x microbatches, in a workload, a stage
// profile's problem or a schedule: the pipeline solver takes one min-cut step per time unit and
// needs two units per instruction within its 1,000,000 steps (frontier/pipeline_solver.hpp).
inline constexpr std::int64_t kMaxInstructions = 250'000;

// Kernels of one kernel-dvfs input, a trace's kernel events or a profile's distinct kernels.
inline constexpr std::int64_t kMaxKernels = 1'000'000;

// An SM clock in MHz that no GPU of the catalogue checks: a whole number up to this (the fastest
// catalogued GPU runs below 2,000 MHz). Where the GPU is known, its supported clocks decide.
inline constexpr std::int64_t kMaxClockMhz = 10'000;
inline constexpr std::string_view kClockMhzAllowed = "a whole number of MHz from 1 to 10000";
// Whether a file may name `mhz` as a clock (nan is not one).
constexpr bool is_clock_mhz(double mhz) {
  return mhz >= 1 && mhz <= static_cast<double>(kMaxClockMhz) &&
         mhz == static_cast<double>(static_cast<std::int64_t>(mhz));
}

// Distinct clocks of one measured profile: NVML lists at most a few hundred per GPU (81 on an
// A100), and kernel-dvfs keeps a table of switch latencies for every ordered pair.
inline constexpr std::int64_t kMaxClocks = 1'024;

// The duration of one kernel or one instruction read from a file, in seconds.
inline constexpr double kMaxDurationSeconds = 3'600;

// The energy of one kernel or one instruction read from a file, in joules: an hour at 278 kW.
inline constexpr double kMaxEnergyJoules = 1e9;

// A power given on the command line, in watts (a GPU draws at most about 1 kW).
inline constexpr double kMaxPowerWatts = 10'000;

// A wait given on the command line in milliseconds (`run-schedule --hold-ms`, switch latencies,
// dwell times): one minute.
inline constexpr double kMaxWaitMilliseconds = 60'000;

}  // namespace kareus
