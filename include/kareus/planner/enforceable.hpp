// Which planned methods a runtime can enforce completely. Kareus and nanobatch-perseus plans need
// nanobatch execution, an SM count per collective and a launch slot per partition besides the
// clocks; a runtime that applies only clocks would run some other plan than the one whose time
// and energy were predicted. `kareus plan --enforceable clocks` picks among the others.
#pragma once

#include <optional>
#include <string>

#include "kareus/core/units.hpp"
#include "kareus/planner/planner.hpp"

namespace kareus::planner {

enum class Enforceable {
  kAll,     // every decision (a runtime with nanobatch execution, e.g. kareus.torch's layers)
  kClocks,  // SM clocks per instruction only
};

Enforceable parse_enforceable(const std::string& text);  // "all" | "clocks"
const char* to_string(Enforceable e);

// Whether every decision of `method`'s plans can be applied by a runtime of kind `e`.
bool enforceable_by(Method method, Enforceable e);

// Among the planned methods `e` can enforce, the one whose selected point is best under the
// selection rule: least energy within `deadline`, else fastest within `energy_budget`, else the
// fastest; a tie goes to the faster (deadline) or the less energy (otherwise). Throws Error naming
// the planned methods when none is enforceable or fits the rule.
Method best_enforceable_method(const PlanResult& plan, Enforceable e,
                               std::optional<Seconds> deadline,
                               std::optional<Joules> energy_budget);

}  // namespace kareus::planner
