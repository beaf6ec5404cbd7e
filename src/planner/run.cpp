// SPDX-License-Identifier: Apache-2.0
#include "kareus/planner/run.hpp"

#include <algorithm>
#include <memory>
#include <optional>

#include "field_check.hpp"
#include "kareus/planner/summary.hpp"
#include "kareus/store/store.hpp"
#include "kareus/version.hpp"

namespace kareus::planner {
bool searches_partitions(const std::vector<Method>& methods) {
  return std::any_of(methods.begin(), methods.end(), [](Method m) {
    return m == Method::kKareus || m == Method::kKareusExhaustive;
  });
}

Method primary_method(const std::vector<Method>& methods) {
  for (auto m : methods)
    if (m == Method::kKareus) return m;
  return methods.back();
}

PlanOutcome run(const PlanRequest& request, const workload::Workload& w, const Context& context) {
  request.check(w);
  PlanOptions options = request.options();
  const bool searches = searches_partitions(options.methods);
  std::unique_ptr<store::Store> db;
  if (!context.store.empty()) {
    db = std::make_unique<store::Store>(context.store);
    options.store = db.get();
  }
  if (context.executors) options.make_executor = context.executors(options);
  options.on_progress = context.on_progress;
  options.on_refine_progress = context.on_refine_progress;
  options.on_solver_progress = context.on_solver_progress;

  PlanOutcome out{request, plan(w, options), {}, {}, {}};
  const Method method =
      request.enforceable == Enforceable::kAll
          ? primary_method(request.methods)
          : best_enforceable_method(
                out.result, request.enforceable, request.selection, request.where,
                FieldCheck(request.where, request.spellings).spelling("enforceable").name);
  out.selected = select_polished(out.result.methods.at(method), request.selection);
  out.schedule = make_schedule(out.result, out.selected);
  const Json provenance{{"version", kVersion},
                        {"executor", "emulator"},
                        {"store", db         ? db->path().string()
                                  : searches ? context.no_store
                                             : "none: no method searched partitions"},
                        {"noise", request.noise_sigma},
                        {"seed", request.seed}};
  out.summary = plan_summary(out.result, request, out.selected, provenance);
  return out;
}

}  // namespace kareus::planner
