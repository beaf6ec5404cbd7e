#include "plan_write.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "kareus/core/json.hpp"
#include "kareus/core/output_set.hpp"
#include "kareus/planner/artifact_export.hpp"
#include "kareus/report/plan_report.hpp"
#include "plan_output.hpp"

namespace kareus::cli {

void check_plan_output_paths(const PlanOutputPaths& paths) {
  if (!paths.out.empty()) check_output_dir(paths.out, "command line", "--out");
  if (!paths.artifact.empty())
    check_output_dir(paths.artifact, "command line", "--export-artifact");
  if (!paths.report.empty()) check_output_file(paths.report, "command line", "--report");
}

void write_plan_outputs(const PlanOutputPaths& paths, const planner::PlanOutcome& outcome,
                        const std::optional<report::ChartLibrary>& library) {
  // The page is built from the plan's files, so --report without --out stages them in a scratch
  // folder that is never committed.
  std::optional<OutputDir> out;
  if (!paths.out.empty()) {
    out.emplace(paths.out, [](std::string_view name) {
      return name == "schedule.json" || name == "summary.json" || name == "partitions.json" ||
             (name.starts_with("frontier_") && name.ends_with(".csv"));
    });
  } else if (library) {
    out.emplace(std::filesystem::temp_directory_path() / fmt::format("kareus-plan-{}", getpid()));
  }
  if (out) write_plan_files(out->staging(), outcome);
  std::optional<OutputDir> artifact;
  if (!paths.artifact.empty()) {
    artifact.emplace(paths.artifact, [](std::string_view name) {
      return (name.starts_with("freqs_pipeline_") || name.starts_with("scheds_pipeline_")) &&
             name.ends_with(".py");
    });
    planner::export_artifact(outcome.result, outcome.selected.method, artifact->staging());
  }
  std::string page;
  if (library) page = report::plan_report_html(report::plan_page_data(out->staging()), *library);

  if (out && !paths.out.empty()) out->commit();
  if (artifact) artifact->commit();
  if (library) write_file_atomically(paths.report, page);
}

}  // namespace kareus::cli
