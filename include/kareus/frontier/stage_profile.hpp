// SPDX-License-Identifier: Apache-2.0
// Per-stage instruction profiles in the Perseus format (`stage,instruction,frequency,time,energy`:
// one row per stage x forward/backward x SM clock, time in s and energy in J of one instruction on
// one GPU), and the pipeline problem they define under synchronous 1F1B.
#pragma once

#include <array>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "kareus/core/units.hpp"
#include "kareus/frontier/pipeline_solver.hpp"

namespace kareus::frontier {

struct StageOption {
  MHz frequency;
  Seconds time;
  Joules energy;
};

struct StageProfile {
  // [stage][0 = forward, 1 = backward]: the measured clocks, in file order.
  std::vector<std::array<std::vector<StageOption>, 2>> stages;
};

// Throws kareus::Error naming file:line, column, value and what is allowed on: a missing column,
// a non-numeric or non-positive time, energy or frequency, an instruction other than forward or
// backward (any case), a repeated (stage, instruction, frequency), stage ids not contiguous from 0,
// or a stage without forward or backward rows.
StageProfile parse_stage_profile(std::string_view text, std::string source_name);
StageProfile read_stage_profile(const std::filesystem::path& path);

// Synchronous 1F1B over `microbatches` with one GPU per stage; each instruction's options are its
// stage's and direction's clocks (option i = stages[s][d][i]). Throws kareus::Error on
// microbatches < 1 or a negative blocking power.
PipelineProblem pipeline_problem(const StageProfile& profile, int microbatches, Watts p_blocking);

}  // namespace kareus::frontier
