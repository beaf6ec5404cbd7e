// SPDX-License-Identifier: Apache-2.0
#include "plan_write.hpp"

#include "kareus/core/json.hpp"
#include "kareus/core/output_set.hpp"
#include "kareus/plan_dir/plan_write.hpp"
#include "kareus/planner/artifact_export.hpp"
#include "kareus/report/plan_report.hpp"

namespace kareus::cli {

void check_plan_output_paths(const PlanOutputPaths& paths) {
  if (!paths.out.empty()) check_output_dir(paths.out, "command line", "--out");
  if (!paths.artifact.empty())
    check_output_dir(paths.artifact, "command line", "--export-artifact");
  if (!paths.report.empty()) check_output_file(paths.report, "command line", "--report");
}

void write_plan_outputs(const PlanOutputPaths& paths, const planner::PlanOutcome& outcome,
                        const std::optional<report::ChartLibrary>& library) {
  // The page is built from the plan's files, in memory when there is no --out.
  const plan_dir::PlanFiles files = plan_dir::plan_files(outcome, paths.out);
  std::optional<OutputDir> out;
  if (!paths.out.empty()) {
    out.emplace(paths.out, [](std::string_view name) { return plan_dir::is_plan_file(name); });
    plan_dir::write_plan_files(files, out->staging());
  }
  std::optional<OutputDir> artifact;
  if (!paths.artifact.empty()) {
    artifact.emplace(paths.artifact, [](std::string_view name) {
      return (name.starts_with("freqs_pipeline_") || name.starts_with("scheds_pipeline_")) &&
             name.ends_with(".py");
    });
    planner::export_artifact(outcome.result, outcome.selected.method, artifact->staging());
  }
  std::string page;
  if (library) page = report::plan_report_html(report::plan_page_data(files), *library);

  if (out) out->commit();
  if (artifact) artifact->commit();
  if (library) write_file_atomically(paths.report, page);
}

}  // namespace kareus::cli
