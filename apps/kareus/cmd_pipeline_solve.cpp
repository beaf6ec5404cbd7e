// SPDX-License-Identifier: Apache-2.0
// kareus pipeline-solve: the Perseus-style iteration time-energy frontier of a per-stage profile.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <optional>

#include "commands.hpp"
#include "common_flags.hpp"
#include "deprecated_alias.hpp"
#include "kareus/core/error.hpp"
#include "kareus/core/json.hpp"
#include "kareus/core/limits.hpp"
#include "kareus/core/table.hpp"
#include "kareus/core/wrap.hpp"
#include "kareus/frontier/deadline_refine.hpp"
#include "kareus/frontier/frontier_polish.hpp"
#include "kareus/frontier/pipeline_solver.hpp"
#include "kareus/frontier/stage_profile.hpp"
#include "kareus/frontier/unit_time.hpp"
#include "kareus/planner/summary.hpp"
#include "refine_progress.hpp"

namespace kareus::cli {
namespace {

struct PipelineSolveFlags {
  std::string profile;
  int microbatches = 0;
  double p_blocking_w = 0;
  double unit_time_ms = 1.0;
  double transfer_ms = 0.0;
  std::optional<double> deadline_s;
  std::optional<double> energy_budget_j;
  int milp_nodes = 0;
  bool plan = false;
  bool json = false;
  bool quiet = false;
};

struct Solved {
  frontier::StageProfile profile;
  frontier::PipelineProblem problem;
  frontier::PipelineSolverResult result;
  // Frontier points from the least-energy end to the fastest, with their plans when asked.
  std::vector<frontier::ParetoPoint> points;
  std::vector<std::vector<int>> plans;
  // With --deadline or --energy-budget: the selected point (an index into points), its plan, and
  // the selection as the user gave it ("deadline 8 s").
  std::optional<std::size_t> selected;
  std::vector<int> selected_plan;
  std::string selection;
  // The selection's polish runs after the solve, so the solver's solve_time_s leaves it out.
  double selection_polish_seconds = 0;
  // With --milp-nodes: the selected plan refined by CBC (deadline_refine.hpp); selected_plan is
  // then its plan.
  std::optional<frontier::DeadlineRefinement> refinement;
};

// The selected plan's time and energy: its frontier point's, or the refined plan's.
frontier::PlanCost selected_cost(const Solved& s) {
  if (s.refinement) return s.refinement->cost;
  const auto& p = s.points[*s.selected];
  return {p.time, p.energy};
}

// Per stage, "F3@1740" style entries in 1F1B order.
std::vector<std::vector<std::pair<std::string, double>>> stage_clocks(
    const Solved& s, const std::vector<int>& plan) {
  std::vector<std::vector<std::pair<std::string, double>>> out;
  for (int stage = 0; stage < s.problem.dag.stages; ++stage) {
    auto& row = out.emplace_back();
    for (int id : s.problem.dag.stage_order[stage]) {
      const auto& ins = s.problem.dag.nodes[id];
      const int d = ins.direction == workload::Direction::kForward ? 0 : 1;
      row.emplace_back(workload::instruction_name(ins),
                       s.profile.stages[stage][d][plan[id]].frequency.value());
    }
  }
  return out;
}

// A deadline or budget outside the frontier's range is refused after the solve (the range is the
// frontier's), before anything is printed.
void check_selection_range(const PipelineSolveFlags& f, const frontier::ParetoSet& points) {
  const auto& fastest = points.points().front();
  const auto& cheapest = points.points().back();
  if (f.deadline_s)
    require(*f.deadline_s >= fastest.time.value(), "command line", "--deadline",
            format_number(*f.deadline_s),
            fmt::format("allowed: the fastest iteration time, {} s, or more",
                        format_number(fastest.time.value())));
  if (f.energy_budget_j)
    require(*f.energy_budget_j >= cheapest.energy.value(), "command line", "--energy-budget",
            format_number(*f.energy_budget_j),
            fmt::format("allowed: the least iteration energy, {} J, or more",
                        format_number(cheapest.energy.value())));
}

// Polishes the plan the selection picks at its bound, as `kareus plan` does (frontier_polish.hpp),
// then picks it: the least energy within the deadline, or the fastest within the budget.
void select_point(const PipelineSolveFlags& f, Solved& s) {
  const auto polish_start = std::chrono::steady_clock::now();
  if (f.deadline_s) {
    const Seconds deadline(*f.deadline_s);
    frontier::polish_within(s.problem, deadline, frontier::kSelectionNeighbours, s.result);
    s.selection = fmt::format("deadline {} s", format_number(deadline.value()));
  } else if (f.energy_budget_j) {
    frontier::polish_within_budget(
        s.problem, [](const frontier::ParetoPoint& p) { return p.energy; },
        Joules(*f.energy_budget_j), frontier::kSelectionNeighbours, s.result);
    s.selection = fmt::format("energy budget {} J", format_number(*f.energy_budget_j));
  } else {
    return;
  }
  s.selection_polish_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - polish_start).count();
  const auto& points = s.result.frontier.points();
  for (std::size_t i = 0; i < points.size(); ++i) {
    const bool meets = f.deadline_s ? points[i].time.value() <= *f.deadline_s
                                    : points[i].energy.value() <= *f.energy_budget_j;
    // Fastest first: the last point within a deadline has its least energy, the first within a
    // budget is its fastest.
    if (meets && (f.deadline_s || !s.selected)) s.selected = i;
  }
  s.selected_plan = s.result.assignment(points[*s.selected].first);
  if (f.deadline_s && f.milp_nodes > 0) {
    std::optional<RefineProgressLines> lines;
    frontier::RefineProgressFn on_progress;
    if (!f.quiet) {
      lines.emplace(stderr);
      on_progress = [&lines](const frontier::RefineProgress& p) { (*lines)("", p); };
    }
    s.refinement = frontier::refine_within_deadline(
        s.problem, s.selected_plan, Seconds(*f.deadline_s), f.milp_nodes, on_progress);
    s.selected_plan = s.refinement->assignment;
  }
}

std::string clock_lines(const Solved& s, const std::vector<int>& plan) {
  std::string out;
  const auto clocks = stage_clocks(s, plan);
  for (std::size_t stage = 0; stage < clocks.size(); ++stage) {
    out += fmt::format("  stage {}:", stage);
    for (const auto& [name, mhz] : clocks[stage]) out += fmt::format(" {}@{:g}", name, mhz);
    out += "\n";
  }
  return out;
}

Json plan_json(const Solved& s, const std::vector<int>& plan) {
  Json stages = Json::array();
  for (const auto& row : stage_clocks(s, plan)) {
    Json instructions = Json::array();
    for (const auto& [name, mhz] : row)
      instructions.push_back({{"instruction", name}, {"frequency_mhz", mhz}});
    stages.push_back(instructions);
  }
  return stages;
}

std::string format_report(const PipelineSolveFlags& f, const Solved& s) {
  std::string out =
      wrap(fmt::format("Iteration frontier of {}: {} stages, {} microbatches (synchronous 1F1B), "
                       "blocking power {:g} W, time unit {:g} ms",
                       f.profile, s.problem.dag.stages, f.microbatches, f.p_blocking_w,
                       f.unit_time_ms)) +
      fmt::format("{} points, from the fastest to the least energy\n\n", s.points.size());
  TextTable table({"point", "time (s)", "energy (J)"});
  for (std::size_t i = 0; i < s.points.size(); ++i) {
    table.add_row({std::to_string(i), fmt::format("{:.4f}", s.points[i].time.value()),
                   fmt::format("{:.2f}", s.points[i].energy.value())});
  }
  out += table.render();
  for (std::size_t i = 0; i < s.plans.size(); ++i) {
    out += fmt::format("\npoint {} clocks (MHz), per stage in 1F1B order:\n", i);
    out += clock_lines(s, s.plans[i]);
  }
  if (s.selected) {
    const auto& p = s.points[*s.selected];
    const auto cost = selected_cost(s);
    // A refined plan is no frontier point: name the point it started from.
    const std::string what =
        s.refinement ? fmt::format(
                           "polished at it, refined by CBC, {} nodes per window ({:.2f} s)): from "
                           "point {}, {:.2f} J, to",
                           f.milp_nodes, s.refinement->seconds, *s.selected, p.energy.value())
                     : fmt::format("polished at it): point {},", *s.selected);
    out += fmt::format(
        "\nselected ({}, {} {:.4f} s, {:.2f} J; clocks (MHz), per stage in 1F1B order:\n",
        s.selection, what, cost.time.value(), cost.energy.value());
    out += clock_lines(s, s.selected_plan);
  }
  return out;
}

Json to_json(const PipelineSolveFlags& f, const Solved& s) {
  Json doc{{"profile", f.profile},
           {"stages", s.problem.dag.stages},
           {"microbatches", f.microbatches},
           {"p_blocking_w", f.p_blocking_w},
           {"unit_time_s", f.unit_time_ms * 1e-3},
           {"transfer_s", f.transfer_ms * 1e-3},
           {"solver", planner::to_json(s.result.summary)}};
  Json points = Json::array();
  for (std::size_t i = 0; i < s.points.size(); ++i) {
    Json point{{"time_s", s.points[i].time.value()}, {"energy_j", s.points[i].energy.value()}};
    if (!s.plans.empty()) point["plan"] = plan_json(s, s.plans[i]);
    points.push_back(point);
  }
  doc["frontier"] = points;
  if (s.selected) {
    const auto cost = selected_cost(s);
    Json selected{{"point", *s.selected},
                  {"time_s", cost.time.value()},
                  {"energy_j", cost.energy.value()},
                  {"polish_time_s", s.selection_polish_seconds},
                  {"plan", plan_json(s, s.selected_plan)}};
    if (f.deadline_s) selected["deadline_s"] = *f.deadline_s;
    if (f.energy_budget_j) selected["energy_budget_j"] = *f.energy_budget_j;
    if (s.refinement)
      selected["milp_refinement"] = {{"max_nodes", f.milp_nodes},
                                     {"improved", s.refinement->improved},
                                     {"time_capped", s.refinement->time_capped},
                                     {"solves", s.refinement->solves},
                                     {"sweeps", s.refinement->sweeps},
                                     {"time_s", s.refinement->seconds}};
    doc["selected"] = selected;
  }
  return doc;
}

}  // namespace

void register_pipeline_solve_command(CLI::App& app) {
  auto flags = std::make_shared<PipelineSolveFlags>();
  auto* cmd = app.add_subcommand(
      "pipeline-solve",
      "Iteration time-energy frontier of a per-stage profile (Perseus format), synchronous 1F1B");
  auto* profile = cmd->add_option("--stage-profile", flags->profile,
                                  "CSV with stage,instruction,frequency,time,energy (one row per "
                                  "stage x forward/backward x clock)");
  add_deprecated_alias(cmd, profile, "--profile", flags->profile);
  cmd->add_option("--microbatches", flags->microbatches, "Microbatches per iteration")->required();
  cmd->add_option("--p-blocking", flags->p_blocking_w,
                  "Power (W) of a GPU that idles or blocks on P2P")
      ->required();
  cmd->add_option("--unit-time-ms", flags->unit_time_ms, "Solver time step in ms")
      ->capture_default_str();
  cmd->add_option("--transfer-ms", flags->transfer_ms,
                  "P2P transfer time (ms) on every dependency between stages; 0 is Perseus's "
                  "convention, whose profiles carry no transfer times")
      ->capture_default_str();
  auto* deadline = cmd->add_option(
      "--deadline", flags->deadline_s,
      "Select the least-energy plan within this iteration time (s), polished at it");
  auto* budget = cmd->add_option(
      "--energy-budget", flags->energy_budget_j,
      "Select the fastest plan within this energy per iteration (J), polished at it");
  deadline->excludes(budget);
  cmd->add_option("--milp-nodes", flags->milp_nodes,
                  "With --deadline: refine the selected plan by exact sub-MILPs (CBC) over windows "
                  "of 64 instructions, at most this many nodes each (0: off); never costlier, same "
                  "result every run")
      ->capture_default_str();
  cmd->add_flag("--plan", flags->plan, "Also print every instruction's clock per point");
  add_json_flag(*cmd, flags->json);
  add_quiet_flag(*cmd, flags->quiet, "No progress on stderr (the --milp-nodes refinement's)");
  cmd->callback([flags] {
    if (flags->profile.empty())
      throw Error("kareus pipeline-solve: --stage-profile is required: a per-stage profile CSV");
    require(flags->microbatches >= 1, "command line", "--microbatches",
            std::to_string(flags->microbatches), "must be at least 1");
    require(flags->p_blocking_w >= 0 && flags->p_blocking_w <= kMaxPowerWatts, "command line",
            "--p-blocking", format_number(flags->p_blocking_w),
            fmt::format("must be a power from 0 to {:g} W", kMaxPowerWatts));
    require(flags->unit_time_ms > 0, "command line", "--unit-time-ms",
            format_number(flags->unit_time_ms), "must be a positive number of milliseconds");
    require(flags->transfer_ms >= 0 && std::isfinite(flags->transfer_ms), "command line",
            "--transfer-ms", format_number(flags->transfer_ms),
            "must be a number of milliseconds >= 0");
    if (flags->deadline_s)
      require(*flags->deadline_s > 0 && std::isfinite(*flags->deadline_s), "command line",
              "--deadline", format_number(*flags->deadline_s),
              "must be a positive number of seconds, at least the fastest iteration time");
    require(flags->milp_nodes >= 0, "command line", "--milp-nodes",
            std::to_string(flags->milp_nodes), "must be a node count >= 0 (0: no refinement)");
    require(flags->milp_nodes == 0 || flags->deadline_s, "command line", "--milp-nodes",
            std::to_string(flags->milp_nodes), "refines a --deadline selection; give --deadline");
    if (flags->energy_budget_j)
      require(*flags->energy_budget_j > 0 && std::isfinite(*flags->energy_budget_j), "command line",
              "--energy-budget", format_number(*flags->energy_budget_j),
              "must be a positive number of joules, at least the least iteration energy");
    Solved s;
    s.profile = frontier::read_stage_profile(flags->profile);
    workload::require_instruction_count(static_cast<int>(s.profile.stages.size()),
                                        flags->microbatches, "command line", "--microbatches");
    s.problem =
        frontier::pipeline_problem(s.profile, flags->microbatches, Watts(flags->p_blocking_w));
    s.problem.transfer = milliseconds(flags->transfer_ms);
    // The solver knows option sets and time units; the user knows the file.
    const auto about_the_profile = [&](auto&& step) {
      try {
        return step();
      } catch (const Error& e) {
        throw Error(fmt::format("{}: {}", flags->profile, e.what()), e.kind());
      }
    };
    // One option longer than the step bound is the profile's fault, and the solver names its row;
    // an iteration too long in total is the unit's, named by its flag with the smallest that works.
    const Seconds unit = milliseconds(flags->unit_time_ms);
    const Seconds longest_option = frontier::longest_option_time(s.problem);
    if (longest_option.value() / unit.value() <= frontier::kMaxPipelineSolverSteps) {
      const Seconds smallest =
          about_the_profile([&] { return frontier::smallest_unit_time(s.problem); });
      frontier::require_unit_time(unit, smallest, "command line", "--unit-time-ms", 1e3);
    }
    s.result = about_the_profile([&] { return frontier::solve_pipeline(s.problem, {unit}); });
    check_selection_range(*flags, s.result.frontier);
    select_point(*flags, s);
    std::cerr << wrap(s.result.summary.to_string(), kLineWidth, "", "  ");
    // Fastest first, as every frontier kareus prints.
    s.points.assign(s.result.frontier.points().begin(), s.result.frontier.points().end());
    if (flags->plan) {
      std::vector<std::uint32_t> indices;
      for (const auto& p : s.points) indices.push_back(p.first);
      s.plans = s.result.assignments(indices);
    }
    std::cout << (flags->json ? to_json(*flags, s).dump(2) + "\n" : format_report(*flags, s));
  });
}

}  // namespace kareus::cli
