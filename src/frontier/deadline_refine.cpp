#include "kareus/frontier/deadline_refine.hpp"

#include <fmt/format.h>

#include <chrono>
#include <string>

#include "kareus/core/error.hpp"
#include "kareus/frontier/deadline_model.hpp"

namespace kareus::frontier {

DeadlineRefinement refine_within_deadline(const PipelineProblem& problem,
                                          const std::vector<int>& plan, Seconds deadline,
                                          int max_nodes) {
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
  // profiles (docs/benchmarks/pipeline_solver.md, "Refining a selection"); the bound, which the
  // refinement does not use, is the same either way.
  const std::vector<std::string> settings{"-preprocess", "off", "-maxNodes",
                                          std::to_string(max_nodes)};
  const auto found = model.optimum(kRefineSafetySeconds, plan, settings);
  if (found) {
    out.time_capped = found->time_limit_reached;
    // CBC's answer is checked as evaluate_plan measures plans: its feasibility tolerances could
    // otherwise let a plan a hair past the deadline, or a tie, replace the start.
    const PlanCost cost = evaluate_plan(problem, found->assignment);
    if (cost.time <= deadline && cost.energy < out.cost.energy) {
      out.assignment = found->assignment;
      out.cost = cost;
      out.improved = true;
    }
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  return out;
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
