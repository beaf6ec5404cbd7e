// SPDX-License-Identifier: Apache-2.0
// kareus report: a self-contained HTML page of a plan directory (docs/report.md).
#include <fmt/format.h>

#include <iostream>

#include "commands.hpp"
#include "kareus/core/json.hpp"
#include "kareus/core/output_set.hpp"
#include "kareus/plan_dir/plan_files.hpp"
#include "kareus/report/measured_compare.hpp"
#include "kareus/report/plan_report.hpp"

namespace kareus::cli {

void register_report_command(CLI::App& app) {
  struct Flags {
    std::string plan;
    std::string out;
    std::vector<std::string> measured;
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand(
      "report", "One self-contained HTML page of a plan: frontiers, savings, timeline, partitions");
  cmd->add_option("--plan", f->plan, "A directory written by kareus plan --out")->required();
  cmd->add_option("--out", f->out, "The page to write (default DIR/report.html)");
  cmd->add_option("--measured", f->measured,
                  "Measurement records of the plan's run, one per rank: adds the plan against "
                  "its measurements (as kareus compare --measured)")
      ->expected(1, -1);
  cmd->callback([f] {
    const std::filesystem::path html = f->out.empty()
                                           ? std::filesystem::path(f->plan) / "report.html"
                                           : std::filesystem::path(f->out);
    // The user's paths before the installation's chart library; a default page inside --plan
    // is checked after the folder, so a wrong --plan is named as such.
    if (!f->out.empty()) check_output_file(html, "command line", "--out");
    const plan_dir::PlanFiles plan = plan_dir::read_plan_files(f->plan);
    Json data = report::plan_page_data(plan);
    if (!f->measured.empty())
      data["measured"] = report::to_json(report::compare_measured(plan, f->measured));
    if (f->out.empty()) check_output_file(html, "command line", "--plan");
    const auto library = report::ChartLibrary::load(report::ChartLibrary::default_dir());
    write_file_atomically(html, report::plan_report_html(data, library));
    std::cout << fmt::format("wrote {}\n", html.string());
  });
}

}  // namespace kareus::cli
