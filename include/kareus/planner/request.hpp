// SPDX-License-Identifier: Apache-2.0
// One checked planning request: what a front end (the CLI, Python, the C API) gathers from its
// user, validated here and nowhere else, then turned into PlanOptions. Each front end only
// translates its flags or arguments into a PlanRequest and says how it spells each field, so that
// a refusal names the flag or argument the user actually typed.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kareus/core/json.hpp"
#include "kareus/hardware/clock_switch.hpp"
#include "kareus/planner/planner.hpp"
#include "kareus/planner/selection.hpp"

namespace kareus::planner {

struct PlanRequest {
  std::vector<Method> methods = default_methods();
  search::Strategy strategy = search::Strategy::kKareus;  // for Method::kKareus
  std::uint64_t seed = 0;
  double noise_sigma = 0.0;
  Seconds unit_time = milliseconds(1);
  ClockGranularity clock_granularity = ClockGranularity::kInstruction;
  Seconds switch_latency = kDefaultSwitchLatency;
  Selection selection;
  Enforceable enforceable = Enforceable::kAll;

  // Named at the front of every message ("command line", "kareus.plan", "plan options").
  std::string where = "plan request";
  // Keyed by the library's field names (those of to_json); a field not listed is spelt as is.
  std::map<std::string, FieldSpelling> spellings;

  // Throws kareus::Error naming the field as spelt, its value and what is allowed, before
  // anything is planned: every method is known and one at least given, noise in [0, 0.5), a
  // positive time unit, a finite switch latency >= 0, a positive deadline or budget, a MILP node
  // limit >= 0 and only with a deadline (check_selection), and a workload the nanobatch methods
  // can split.
  void check(const workload::Workload& w) const;

  // The planner's options (no store, progress or executor: those belong to the caller).
  PlanOptions options() const;

  Json to_json() const;
  // Reads what to_json writes; fields left out keep their defaults, unknown fields are refused.
  static PlanRequest from_json(const JsonValue& value);
  // The names of the fields from_json reads, in to_json's order: what every front end lets its
  // user set.
  static const std::vector<std::string>& fields();
};

// Whether any of `methods` runs microbatches as two nanobatches (all but megatron and perseus),
// so the workload's microbatch size must split.
bool needs_nanobatch_split(const std::vector<Method>& methods);

// "megatron,perseus" -> methods; empty items are skipped, unknown names refused.
std::vector<Method> parse_methods(std::string_view comma_separated);

// What PlanRequest::check checks of the options alone, with the library's field names; plan()
// calls it, so a caller that builds PlanOptions by hand is held to the same rules.
void check_options(const PlanOptions& options, const workload::Workload& w);

// Refuses options.unit_time below `smallest` (frontier::smallest_unit_time of the job's pipeline
// problem), naming the field as options.spellings spell it; plan() calls it before the solver.
void check_unit_time(const PlanOptions& options, Seconds smallest);

}  // namespace kareus::planner
