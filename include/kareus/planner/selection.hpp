// SPDX-License-Identifier: Apache-2.0
// Choosing a plan on the planner's result: the selection rules (deadline, energy budget, maximum
// throughput), the polish and MILP refinement a selection's plan gets, and the choice of a method a
// runtime can enforce. A selection reads the result and returns a SelectedPlan; it never changes
// the result, so the frontier's points and plan indices stay what plan() made them.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kareus/planner/planner.hpp"
#include "kareus/schedule/schedule.hpp"

namespace kareus::planner {

// Which planned methods a runtime can enforce completely. Kareus and nanobatch-perseus plans need
// nanobatch execution, an SM count per collective and a launch slot per partition besides the
// clocks; a runtime that applies only clocks would run some other plan than the one whose time
// and energy were predicted.
enum class Enforceable {
  kAll,     // every decision (a runtime with nanobatch execution, e.g. kareus.torch's layers)
  kClocks,  // SM clocks per instruction only
};

// "all" | "clocks"; refusals name `field` after `where`.
Enforceable parse_enforceable(const std::string& text, std::string_view where = "plan request",
                              std::string_view field = "enforceable");
const char* to_string(Enforceable e);

// Whether every decision of `method`'s plans can be applied by a runtime of kind `e`.
bool enforceable_by(Method method, Enforceable e);

// A plan chosen on one method's frontier, and how it was chosen. Holds what the schedule needs, so
// it stands on its own: a selection made after plan() may pick a plan the frontier does not hold.
struct SelectedPlan {
  Method method = Method::kKareus;
  Selection selection;
  IterationPoint point;
  // Per instruction of the method's pipeline problem (frontier::PipelineProblem::dag), the index
  // of its option.
  std::vector<int> assignment;
  // A deadline selection with milp_nodes > 0: what its MILP refinement did.
  std::optional<SelectionRefinement> refinement;
};

// The point `selection` picks on `m`'s frontier as it stands (no polish); throws Error when none
// qualifies, naming the bound and the frontier's range.
const IterationPoint& select(const MethodResult& m, const Selection& selection);
const IterationPoint& select_by_deadline(const MethodResult& m, Seconds deadline);
const IterationPoint& select_by_energy_budget(const MethodResult& m, Joules budget);
const IterationPoint& select_max_throughput(const MethodResult& m);

// The plan `selection` picks on `m` after polishing that selection's plan at its bound
// (frontier::polish_within for a deadline; the fastest plans within an energy budget at their own
// times) and, for a deadline with milp_nodes > 0, refining it (Selection::milp_nodes). The polish
// starts from the frontier as solved and keeps the plans plan() polished, so the selection plan()
// was given and the same selection made afterwards pick the same plan, whichever front end asks
// (`kareus plan --deadline`, kareus_plan_select, Python's select). `m` is only read: the plans a
// later selection finds live in the SelectedPlan. Throws kareus::Error when no point qualifies
// (before polishing) or the selection is malformed (check_selection).
SelectedPlan select_polished(const MethodResult& m, const Selection& selection,
                             const frontier::RefineProgressFn& on_refine = {});

// Among the planned methods `e` can enforce, the one whose selected point is best under the
// selection's rule: least energy within a deadline, else fastest within an energy budget, else the
// fastest; a tie goes to the faster (deadline) or the less energy (otherwise). Throws Error naming
// `field` after `where` and the planned methods when none is enforceable or fits the rule.
Method best_enforceable_method(const PlanResult& plan, Enforceable e, const Selection& selection,
                               std::string_view where = "plan request",
                               std::string_view field = "enforceable");

// Refuses a selection whose milp_nodes is negative, or positive for a rule other than a deadline
// (only a deadline selection is refined), naming the field as `spellings` spell it.
void check_selection(const Selection& selection, std::string_view where,
                     const std::map<std::string, FieldSpelling>& spellings = {});

// The schedule of a selected plan, for the runtime.
Schedule make_schedule(const PlanResult& plan, const SelectedPlan& selected);

}  // namespace kareus::planner
