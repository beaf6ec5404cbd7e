// SPDX-License-Identifier: Apache-2.0
#include "kareus/frontier/deadline_refine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <string>

#include "kareus/core/error.hpp"
#include "kareus/frontier/deadline_model.hpp"

namespace kareus::frontier {

namespace {

// Instructions by their earliest start in `plan` (ties by id): instructions close in this order
// run at about the same time, on neighbouring stages, and trade slack along the same paths.
std::vector<int> earliest_start_order(const PipelineProblem& problem,
                                      const std::vector<int>& plan) {
  const auto start = plan_start_times(problem, plan);
  std::vector<int> order(start.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return start[a] < start[b]; });
  return order;
}

// Whether a sweep that took the energy from `before` to `after` gained enough for another: some
// gain, and at least `min_gain` of `before`.
bool worth_another_sweep(Joules before, Joules after, double min_gain) {
  const double gain = before.value() - after.value();
  return gain > 0 && gain >= min_gain * before.value();
}

// Takes `candidate` into `out` when it is cheaper and within the deadline as evaluate_plan
// measures plans: CBC's feasibility tolerances could otherwise let a plan a hair past the
// deadline, or a tie, replace the current one.
bool keep_if_cheaper(const PipelineProblem& problem, Seconds deadline,
                     const std::vector<int>& candidate, DeadlineRefinement& out) {
  const PlanCost cost = evaluate_plan(problem, candidate);
  if (cost.time > deadline || !(cost.energy < out.cost.energy)) return false;
  out.assignment = candidate;
  out.cost = cost;
  out.improved = true;
  return true;
}

// The whole-problem MILP from `plan` within `max_nodes` nodes, kept when cheaper within the
// deadline.
DeadlineRefinement refine_whole(const PipelineProblem& problem, const std::vector<int>& plan,
                                Seconds deadline, int max_nodes) {
  const auto began = std::chrono::steady_clock::now();
  require(max_nodes >= 0, "deadline refinement", "max_nodes", std::to_string(max_nodes),
          "a node count >= 0");
  DeadlineRefinement out{plan, evaluate_plan(problem, plan)};
  require(out.cost.time <= deadline, "deadline refinement", "plan",
          fmt::format("{} s", out.cost.time.value()),
          fmt::format("an iteration within the deadline, {} s", deadline.value()));
  // Exact options (no convex hull): the refinement is after mixes the hull cannot express.
  DeadlineModel model(problem, false);
  model.set_deadline(deadline);
  // Without CBC's preprocessing its heuristics find cheaper plans within few nodes on the A40
  // profiles (docs/benchmarks/pipeline_solver.md at commit a64c35e, "Refining a selection"); the
  // bound, which the refinement does not use, is the same either way.
  const std::vector<std::string> settings{"-preprocess", "off", "-maxNodes",
                                          std::to_string(max_nodes)};
  const auto found = model.optimum(kRefineSafetySeconds, plan, settings);
  out.solves = 1;
  if (found) {
    out.time_capped = found->time_limit_reached;
    keep_if_cheaper(problem, deadline, found->assignment, out);
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  return out;
}

}  // namespace

std::optional<WindowPlan> best_in_window(const PipelineProblem& problem,
                                         const std::vector<int>& plan, Seconds deadline,
                                         const std::vector<char>& movable, int max_nodes,
                                         bool preprocess) {
  const std::size_t n = plan.size();
  require(movable.size() == n, "window search", "movable nodes", std::to_string(movable.size()),
          fmt::format("one flag per instruction, {}", n));
  require(evaluate_plan(problem, plan).time <= deadline, "window search", "plan", "given",
          fmt::format("a plan within the deadline, {} s", deadline.value()));
  // Every node outside the window gets a set of one option, its own: the sub-MILP has columns
  // for the window's options only, so CBC's LPs stay small whatever the pipeline's size.
  PipelineProblem window = problem;
  std::vector<int> start = plan;
  for (std::size_t v = 0; v < n; ++v) {
    if (movable[v]) continue;
    window.option_set_of[v] = static_cast<int>(window.option_sets.size());
    window.option_sets.push_back({problem.option_sets[problem.option_set_of[v]].at(plan[v])});
    start[v] = 0;
  }
  DeadlineModel model(window, false);
  model.set_deadline(deadline);
  std::vector<std::string> settings{"-maxNodes", std::to_string(max_nodes)};
  if (!preprocess) settings.insert(settings.begin(), {"-preprocess", "off"});
  const auto found = model.optimum(kRefineSafetySeconds, start, settings);
  if (!found) return std::nullopt;
  WindowPlan out{plan, found->proven, found->time_limit_reached};
  for (std::size_t v = 0; v < n; ++v)
    if (movable[v]) out.assignment[v] = found->assignment[v];
  return out;
}

DeadlineRefinement refine_in_windows(const PipelineProblem& problem, const std::vector<int>& plan,
                                     Seconds deadline, const WindowSearch& search) {
  const auto began = std::chrono::steady_clock::now();
  require(search.window > 0, "window search", "window", std::to_string(search.window),
          "an instruction count > 0");
  require(search.max_nodes >= 0, "window search", "max_nodes", std::to_string(search.max_nodes),
          "a node count >= 0");
  require(search.max_solves > 0, "window search", "max_solves", std::to_string(search.max_solves),
          "a solve count > 0");
  require(search.min_sweep_gain >= 0, "window search", "min_sweep_gain",
          fmt::format("{}", search.min_sweep_gain), "a fraction of the energy >= 0");
  DeadlineRefinement out{plan, evaluate_plan(problem, plan)};
  const Joules start_energy = out.cost.energy;
  require(out.cost.time <= deadline, "window search", "plan",
          fmt::format("{} s", out.cost.time.value()),
          fmt::format("an iteration within the deadline, {} s", deadline.value()));
  const int n = static_cast<int>(plan.size());
  const int window = std::min(search.window, n);
  const int stride = std::max(1, window / 2);
  const auto report = [&](bool sweep_done) {
    if (search.on_progress)
      search.on_progress({out.sweeps, out.solves, sweep_done, start_energy, out.cost.energy});
  };
  while (out.solves < search.max_solves) {
    const Joules before = out.cost.energy;
    ++out.sweeps;
    const auto order = earliest_start_order(problem, out.assignment);
    for (int first = 0; out.solves < search.max_solves; first += stride) {
      const int begin = std::min(first, n - window);
      std::vector<char> movable(n, 0);
      for (int i = begin; i < begin + window; ++i) movable[order[i]] = 1;
      ++out.solves;
      const auto found = best_in_window(problem, out.assignment, deadline, movable,
                                        search.max_nodes, search.preprocess);
      if (found) {
        out.time_capped = out.time_capped || found->time_capped;
        keep_if_cheaper(problem, deadline, found->assignment, out);
      }
      if (begin + window >= n) break;
      report(false);
    }
    report(true);
    if (!worth_another_sweep(before, out.cost.energy, search.min_sweep_gain)) break;
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  return out;
}

DeadlineRefinement refine_in_windows_both(const PipelineProblem& problem,
                                          const std::vector<int>& plan, Seconds deadline,
                                          const WindowSearch& search) {
  const auto began = std::chrono::steady_clock::now();
  WindowSearch on = search;
  on.preprocess = true;
  auto out = refine_in_windows(problem, plan, deadline, on);
  WindowSearch off = search;
  off.preprocess = false;
  // The second search's reports as the portfolio's: after the first's sweeps and solves, and
  // never above the best plan either has found.
  if (search.on_progress)
    off.on_progress = [&](RefineProgress p) {
      p.sweep += out.sweeps;
      p.solves += out.solves;
      p.energy = std::min(p.energy, out.cost.energy);
      search.on_progress(p);
    };
  const auto other = refine_in_windows(problem, plan, deadline, off);
  if (other.cost.energy < out.cost.energy) {
    out.assignment = other.assignment;
    out.cost = other.cost;
    out.improved = other.improved;
  }
  out.time_capped = out.time_capped || other.time_capped;
  out.solves += other.solves;
  out.sweeps += other.sweeps;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  return out;
}

DeadlineRefinement refine_within_deadline(const PipelineProblem& problem,
                                          const std::vector<int>& plan, Seconds deadline,
                                          int max_nodes, const RefineProgressFn& on_progress) {
  const auto began = std::chrono::steady_clock::now();
  const auto whole = refine_whole(problem, plan, deadline, max_nodes);
  const Joules start = evaluate_plan(problem, plan).energy;
  if (on_progress) on_progress({0, whole.solves, true, start, whole.cost.energy});
  WindowSearch search;
  search.max_nodes = max_nodes;
  // The windows' reports as the whole refinement's: from the plan it was given, the whole MILP's
  // solve counted.
  if (on_progress)
    search.on_progress = [&](RefineProgress p) {
      p.start = start;
      p.solves += whole.solves;
      on_progress(p);
    };
  if (static_cast<int>(plan.size()) <= search.window) return whole;
  auto out = refine_in_windows_both(problem, whole.assignment, deadline, search);
  out.improved = out.improved || whole.improved;
  out.time_capped = out.time_capped || whole.time_capped;
  out.solves += whole.solves;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  return out;
}

std::string refine_progress_line(const RefineProgress& p) {
  const std::string stage = p.sweep == 0
                                ? std::string("whole problem")
                                : fmt::format("sweep {}{}", p.sweep, p.sweep_done ? " done" : "");
  const double change =
      p.start.value() > 0 ? 100.0 * (p.energy.value() - p.start.value()) / p.start.value() : 0.0;
  return fmt::format("MILP refinement: {}, {} CBC solve{}, {:.1f} J ({:+.2f} %)", stage, p.solves,
                     p.solves == 1 ? "" : "s", p.energy.value(), change);
}

std::uint32_t add_refined_plan(const DeadlineRefinement& refinement, PipelineSolverResult& result) {
  const auto last = static_cast<std::uint32_t>(result.changes.size() - 1);
  const std::vector<int> before = result.assignment(last);
  require(before.size() == refinement.assignment.size(), "deadline refinement", "plan",
          fmt::format("{} instructions", refinement.assignment.size()),
          fmt::format("one option per instruction of the solved problem, {}", before.size()));
  auto& changes = result.changes.emplace_back();
  for (int v = 0; v < static_cast<int>(before.size()); ++v)
    if (refinement.assignment[v] != before[v])
      changes.push_back(OptionChange{v, refinement.assignment[v]});
  result.frontier.insert(ParetoPoint{refinement.cost.time, refinement.cost.energy, last + 1});
  return last + 1;
}

}  // namespace kareus::frontier
