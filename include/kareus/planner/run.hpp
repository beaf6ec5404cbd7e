// SPDX-License-Identifier: Apache-2.0
// One plan run, whichever front end asks: a checked request and a workload in; the planner's
// result, the plan selected for the runtime, its schedule and the summary out. `kareus plan`, the
// C API and Python call run() and only translate their input to a PlanRequest and the outcome to
// their output.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include "kareus/core/json.hpp"
#include "kareus/planner/request.hpp"
#include "kareus/planner/selection.hpp"
#include "kareus/schedule/schedule.hpp"

namespace kareus::planner {

// What the caller of a run owns besides the request: where measurements are kept, what measures,
// and who watches.
struct Context {
  // The SQLite measurement store to resume from and add to, opened before anything is planned;
  // empty: none.
  std::filesystem::path store;
  // How summary.json's provenance names a missing store when a method searched partitions
  // ("none: --no-db" on the command line).
  std::string no_store = "none";
  // The executors of the partition searches, given the options the run plans with (their store,
  // noise and seed); empty: default_executor.
  std::function<ExecutorFactory(const PlanOptions&)> executors;
  std::function<void(const PlanProgress&)> on_progress;
  std::function<void(Method, const frontier::RefineProgress&)> on_refine_progress;
  std::function<void(Method, const frontier::PipelineSolverProgress&)> on_solver_progress;
};

struct PlanOutcome {
  PlanRequest request;
  PlanResult result;
  // The plan the runtime gets: the request's selection on the method it names (kareus when
  // planned, else the last method asked for), or on the best method the request's runtime can
  // enforce.
  SelectedPlan selected;
  Schedule schedule;
  // summary.json (plan_summary).
  Json summary;
};

// Whether any of `methods` searches partitions (kareus, kareus-exhaustive): the methods a
// measurement store serves.
bool searches_partitions(const std::vector<Method>& methods);

// The method whose plan is selected when every method is enforceable: kareus when planned, else
// the last one asked for.
Method primary_method(const std::vector<Method>& methods);

// Checks the request (PlanRequest::check) before the store is opened or anything is planned, plans,
// selects and summarises. Throws kareus::Error as the request's checks, plan() and the selection
// do.
PlanOutcome run(const PlanRequest& request, const workload::Workload& w,
                const Context& context = {});

}  // namespace kareus::planner
