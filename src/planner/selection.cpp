// SPDX-License-Identifier: Apache-2.0
#include "kareus/planner/selection.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>

#include "field_check.hpp"
#include "kareus/core/error.hpp"
#include "kareus/frontier/deadline_refine.hpp"
#include "kareus/frontier/frontier_polish.hpp"
#include "polish.hpp"

namespace kareus::planner {
namespace {

std::string range_of(const MethodResult& m) {
  return fmt::format("{} frontier spans {:.3f}-{:.3f} s and {:.0f}-{:.0f} J", to_string(m.method),
                     m.fastest().time.value(), m.frontier.back().time.value(),
                     m.min_energy().energy.value(), m.fastest().energy.value());
}

// The point `selection` picks on a frontier that is known to hold one.
const IterationPoint& pick(const std::vector<IterationPoint>& frontier,
                           const Selection& selection) {
  switch (selection.rule) {
    case SelectionRule::kDeadline:
      return *least_energy_within(frontier, Seconds(selection.bound));
    case SelectionRule::kEnergyBudget:
      return *fastest_within(frontier, Joules(selection.bound));
    case SelectionRule::kMaxThroughput:
      break;
  }
  return frontier.front();
}

// After a deadline selection's polish: the plan the deadline picks (the least job energy within
// it, as select_by_deadline picks) refined by CBC from that plan, and added to the solver's plans
// when it costs the job less within the deadline, so the selection picks it.
SelectionRefinement refine_selection(const Selection& selection, const MethodResult& m,
                                     frontier::PipelineSolverResult& solver,
                                     const frontier::RefineProgressFn& on_progress) {
  const Seconds deadline(selection.bound);
  std::optional<frontier::ParetoPoint> chosen;
  Joules least{0};
  for (const auto& pt : solver.frontier.points()) {
    const IterationPoint ip = m.job.point(pt);
    if (ip.time <= deadline && (!chosen || ip.energy < least)) {
      chosen = pt;
      least = ip.energy;
    }
  }
  SelectionRefinement record{selection};
  if (!chosen) return record;
  // The pipeline's share of the deadline, and never less than the chosen plan's own time (which
  // meets the deadline as a job; subtracting the tail can round just below it).
  const Seconds within = std::max(deadline - m.job.tail_time, chosen->time);
  const auto refined = frontier::refine_within_deadline(m.problem, solver.assignment(chosen->first),
                                                        within, selection.milp_nodes, on_progress);
  record.time_capped = refined.time_capped;
  record.seconds = refined.seconds;
  if (refined.improved) {
    const IterationPoint job = m.job.point({refined.cost.time, refined.cost.energy});
    if (job.time <= deadline && job.energy < least) {
      frontier::add_refined_plan(refined, solver);
      record.improved = true;
    }
  }
  return record;
}

}  // namespace

std::optional<SelectionRefinement> polish_selection(const Selection& selection,
                                                    const MethodResult& m,
                                                    frontier::PipelineSolverResult& solver,
                                                    const frontier::RefineProgressFn& on_refine) {
  auto others = std::exchange(solver.frontier, m.unpolished);
  std::optional<SelectionRefinement> refinement;
  if (selection.rule == SelectionRule::kDeadline) {
    frontier::polish_within(m.problem, Seconds(selection.bound) - m.job.tail_time,
                            frontier::kSelectionNeighbours, solver);
    if (selection.milp_nodes > 0) refinement = refine_selection(selection, m, solver, on_refine);
  } else if (selection.rule == SelectionRule::kEnergyBudget) {
    frontier::polish_within_budget(
        m.problem, [&](const frontier::ParetoPoint& pt) { return m.job.point(pt).energy; },
        Joules(selection.bound), frontier::kSelectionNeighbours, solver);
  }
  for (const auto& pt : others.points()) solver.frontier.insert(pt);
  return refinement;
}

std::vector<IterationPoint> job_frontier(const MethodResult& m,
                                         const frontier::PipelineSolverResult& solver) {
  std::vector<IterationPoint> out;
  for (const auto& pt : solver.frontier) out.push_back(m.job.point(pt));
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.time < b.time; });
  return out;
}

const IterationPoint* least_energy_within(const std::vector<IterationPoint>& frontier,
                                          Seconds deadline) {
  const IterationPoint* best = nullptr;
  for (const auto& p : frontier)
    if (p.time <= deadline && (!best || p.energy < best->energy)) best = &p;
  return best;
}

const IterationPoint* fastest_within(const std::vector<IterationPoint>& frontier, Joules budget) {
  const IterationPoint* best = nullptr;
  for (const auto& p : frontier)
    if (p.energy <= budget && (!best || p.time < best->time)) best = &p;
  return best;
}

const char* to_string(SelectionRule rule) {
  switch (rule) {
    case SelectionRule::kMaxThroughput:
      return "max-throughput";
    case SelectionRule::kDeadline:
      return "deadline";
    case SelectionRule::kEnergyBudget:
      return "energy-budget";
  }
  return "?";
}

std::string Selection::describe() const {
  switch (rule) {
    case SelectionRule::kDeadline:
      return fmt::format("deadline {:g} s", bound);
    case SelectionRule::kEnergyBudget:
      return fmt::format("energy budget {:g} J", bound);
    case SelectionRule::kMaxThroughput:
      break;
  }
  return "max-throughput";
}

Enforceable parse_enforceable(const std::string& text, std::string_view where,
                              std::string_view field) {
  if (text == "all") return Enforceable::kAll;
  if (text == "clocks") return Enforceable::kClocks;
  throw Error::invalid(where, field, text,
                       "all (every decision of the plan) or clocks (SM clocks only)");
}

const char* to_string(Enforceable e) {
  return e == Enforceable::kAll ? "all" : "clocks";
}

bool enforceable_by(Method method, Enforceable e) {
  if (e == Enforceable::kAll) return true;
  return method == Method::kMegatron || method == Method::kPerseus;
}

const IterationPoint& select(const MethodResult& m, const Selection& selection) {
  switch (selection.rule) {
    case SelectionRule::kDeadline:
      return select_by_deadline(m, Seconds(selection.bound));
    case SelectionRule::kEnergyBudget:
      return select_by_energy_budget(m, Joules(selection.bound));
    case SelectionRule::kMaxThroughput:
      break;
  }
  return select_max_throughput(m);
}

const IterationPoint& select_by_deadline(const MethodResult& m, Seconds deadline) {
  if (!(deadline.value() > 0))
    throw Error::invalid("", "deadline", format_number(deadline.value()),
                         "must be a positive number of seconds");
  const IterationPoint* best = least_energy_within(m.frontier, deadline);
  if (!best)
    throw Error::invalid("", "deadline", format_number(deadline.value()),
                         "below the fastest plan; the " + range_of(m));
  return *best;
}

const IterationPoint& select_by_energy_budget(const MethodResult& m, Joules budget) {
  if (!(budget.value() > 0))
    throw Error::invalid("", "energy budget", format_number(budget.value()),
                         "must be a positive number of joules");
  const IterationPoint* best = fastest_within(m.frontier, budget);
  if (!best)
    throw Error::invalid("", "energy budget", format_number(budget.value()),
                         "below the least-energy plan; the " + range_of(m));
  return *best;
}

const IterationPoint& select_max_throughput(const MethodResult& m) {
  return m.fastest();
}

SelectedPlan select_polished(const MethodResult& m, const Selection& selection,
                             const frontier::RefineProgressFn& on_refine) {
  check_selection(selection, "selection");
  // Refuses a selection nothing meets before polishing: a polish never moves the fastest point, nor
  // brings a point within a budget when none was.
  const IterationPoint& planned = select(m, selection);
  if (selection.rule == SelectionRule::kMaxThroughput || selection == m.polished_for)
    return {m.method, selection, planned, m.solver.assignment(planned.plan),
            selection == m.polished_for ? m.refinement : std::nullopt};
  // On a copy of the solver's plans: the result stays as plan() made it.
  frontier::PipelineSolverResult solver = m.solver;
  auto refinement = polish_selection(selection, m, solver, on_refine);
  const auto frontier = job_frontier(m, solver);
  const IterationPoint& point = pick(frontier, selection);
  return {m.method, selection, point, solver.assignment(point.plan), std::move(refinement)};
}

Method best_enforceable_method(const PlanResult& plan, Enforceable e, const Selection& selection,
                               std::string_view where, std::string_view field) {
  std::optional<Method> best;
  const IterationPoint* best_point = nullptr;
  std::vector<std::string> planned;
  const bool deadline = selection.rule == SelectionRule::kDeadline;
  for (const auto& [method, result] : plan.methods) {
    planned.emplace_back(to_string(method));
    if (!enforceable_by(method, e) || result.frontier.empty()) continue;
    const IterationPoint* point = nullptr;
    try {
      point = &select(result, selection);
    } catch (const Error&) {
      continue;  // no point of this method meets the rule; another one may
    }
    // The rule's own measure first; a tie goes to the other one (Perseus at Megatron's clocks
    // runs exactly as fast for less energy).
    const auto key = [&](const IterationPoint* p) {
      const double time = p->time.value(), energy = p->energy.value();
      return deadline ? std::pair(energy, time) : std::pair(time, energy);
    };
    if (!best_point || key(point) < key(best_point)) {
      best = method;
      best_point = point;
    }
  }
  if (!best) {
    throw Error::invalid(
        where, field, to_string(e),
        fmt::format("a method whose plans it can apply and that meets the selection rule; "
                    "planned: {} (only megatron and perseus run on clocks alone)",
                    fmt::join(planned, ", ")));
  }
  return *best;
}

void check_selection(const Selection& s, const FieldCheck& c) {
  const std::string nodes = std::to_string(s.milp_nodes);
  c.text(s.milp_nodes >= 0, "milp_nodes", nodes, "must be a node count >= 0 (0: no refinement)");
  c.text(s.milp_nodes == 0 || s.rule == SelectionRule::kDeadline, "milp_nodes", nodes,
         "refines a deadline selection; give a deadline");
}

void check_selection(const Selection& selection, std::string_view where,
                     const std::map<std::string, FieldSpelling>& spellings) {
  check_selection(selection, FieldCheck(where, spellings));
}

}  // namespace kareus::planner
