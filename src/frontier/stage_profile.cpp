// SPDX-License-Identifier: Apache-2.0
#include "kareus/frontier/stage_profile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "kareus/core/csv.hpp"
#include "kareus/core/error.hpp"
#include "kareus/core/limits.hpp"
#include "kareus/workload/pipeline.hpp"

namespace kareus::frontier {
namespace {

int direction_index(const CsvRow& row) {
  std::string name = row.text("instruction");
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // Perseus (lowtime, Merak) names them Forward/Backward; its CSVs write forward/backward.
  if (name == "forward") return 0;
  if (name == "backward") return 1;
  row.fail("instruction", "expected forward or backward (any case)");
}

StageProfile parse(const CsvTable& table) {
  table.require_columns({"stage", "instruction", "frequency", "time", "energy"});
  StageProfile profile;
  // First line of each stage, to name it when the stage is incomplete.
  std::map<long, std::size_t> first_line;
  std::map<std::tuple<long, int, double>, std::size_t> seen;
  for (std::size_t i = 0; i < table.rows(); ++i) {
    const CsvRow row = table.row(i);
    const long stage = row.integer("stage");
    // Every stage runs at least one microbatch forward and backward.
    constexpr long kMaxStages = kMaxInstructions / 2;
    if (stage < 0 || stage >= kMaxStages)
      row.fail("stage", fmt::format("expected a stage id from 0 to {} (at most {} instructions "
                                    "per iteration)",
                                    kMaxStages - 1, kMaxInstructions));
    const int direction = direction_index(row);
    const double frequency = row.number("frequency");
    if (!is_clock_mhz(frequency)) row.fail("frequency", kClockMhzAllowed);
    const double time = row.positive_number("time");
    if (time > kMaxDurationSeconds)
      row.fail("time", fmt::format("expected at most {:.0f} seconds for one instruction",
                                   kMaxDurationSeconds));
    const double energy = row.positive_number("energy");
    if (energy > kMaxEnergyJoules)
      row.fail("energy", fmt::format("expected at most {:g} joules", kMaxEnergyJoules));
    const auto [it, inserted] = seen.emplace(std::tuple{stage, direction, frequency}, row.line());
    if (!inserted) {
      row.fail(
          "frequency",
          fmt::format("each stage, instruction and frequency once; also on line {}", it->second));
    }
    first_line.emplace(stage, row.line());
    if (static_cast<long>(profile.stages.size()) <= stage) profile.stages.resize(stage + 1);
    profile.stages[stage][direction].push_back(
        StageOption{MHz(frequency), Seconds(time), Joules(energy)});
  }
  if (profile.stages.empty()) throw Error(fmt::format("{}: no profile rows", table.source()));
  for (std::size_t s = 0; s < profile.stages.size(); ++s) {
    if (!first_line.count(static_cast<long>(s))) {
      const auto later = first_line.upper_bound(static_cast<long>(s));
      throw Error::invalid(
          fmt::format("{}:{}", table.source(), later->second), "column 'stage'",
          std::to_string(later->first),
          fmt::format("stage ids must be contiguous from 0; stage {} has no rows", s));
    }
    for (int d = 0; d < 2; ++d) {
      if (profile.stages[s][d].empty()) {
        throw Error::invalid(fmt::format("{}:{}", table.source(), first_line[static_cast<long>(s)]),
                             "column 'stage'", std::to_string(s),
                             fmt::format("every stage needs forward and backward rows; stage {} "
                                         "has no {} rows",
                                         s, d == 0 ? "forward" : "backward"));
      }
    }
  }
  return profile;
}

}  // namespace

StageProfile parse_stage_profile(std::string_view text, std::string source_name) {
  return parse(CsvTable::parse(text, std::move(source_name)));
}

StageProfile read_stage_profile(const std::filesystem::path& path) {
  return parse(CsvTable::read_file(path));
}

PipelineProblem pipeline_problem(const StageProfile& profile, int microbatches, Watts p_blocking) {
  workload::require_instruction_count(static_cast<int>(profile.stages.size()), microbatches,
                                      "pipeline problem", "microbatches");
  require(p_blocking.value() >= 0, "pipeline problem", "p_blocking",
          format_number(p_blocking.value()), "a number of watts >= 0");
  PipelineProblem problem;
  problem.dag = workload::build_1f1b(static_cast<int>(profile.stages.size()), microbatches);
  problem.p_blocking = p_blocking;
  for (const auto& stage : profile.stages) {
    for (const auto& direction : stage) {
      auto& set = problem.option_sets.emplace_back();
      for (const auto& o : direction) set.push_back(ExecutionOption{o.time, o.energy});
    }
  }
  for (const auto& ins : problem.dag.nodes) {
    problem.option_set_of.push_back(2 * ins.stage +
                                    (ins.direction == workload::Direction::kBackward ? 1 : 0));
  }
  return problem;
}

}  // namespace kareus::frontier
