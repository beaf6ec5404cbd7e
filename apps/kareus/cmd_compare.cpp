// SPDX-License-Identifier: Apache-2.0
// kareus compare: two plans side by side, and where their difference in time and energy comes
// from (report/plan_compare.hpp); or, with --measured, a plan against what the runtime measured
// while playing it (report/measured_compare.hpp).
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "common_flags.hpp"
#include "kareus/core/error.hpp"
#include "kareus/plan_dir/plan_files.hpp"
#include "kareus/report/measured_compare.hpp"
#include "kareus/report/plan_compare.hpp"

namespace kareus::cli {

namespace {

// The files of the plan directory --plan (or --plan-b) names.
plan_dir::PlanFiles plan_folder(const std::string& dir) {
  std::error_code ec;
  require(std::filesystem::is_directory(dir, ec), "command line", "--plan", dir,
          "not a folder; give the --out DIR of kareus plan");
  return plan_dir::read_plan_files(dir);
}

// The same, refused unless it holds a summary (what two plans are compared by).
plan_dir::PlanFiles plan_of(const std::string& dir) {
  auto files = plan_folder(dir);
  require(files.texts.contains(plan_dir::kSummary), "command line", "--plan", dir,
          "has no summary.json; give the --out DIR of kareus plan");
  return files;
}

}  // namespace

void register_compare_command(CLI::App& app) {
  struct Flags {
    std::string plan;
    std::string plan_b;
    std::string a;
    std::string b;
    std::vector<std::string> measured;
    bool json = false;
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand(
      "compare",
      "Why one plan costs less than another, or how a plan fared against its measured run");
  cmd->add_option("--plan", f->plan, "A directory written by kareus plan --out")->required();
  cmd->add_option("--plan-b", f->plan_b,
                  "Read B from this plan directory instead (the same workload)");
  cmd->add_option("--measured", f->measured,
                  "Measurement records of the plan's schedule, one per rank (--record of the "
                  "runtime): compare the plan with them instead of with another plan")
      ->expected(1, -1);
  cmd->add_option("A", f->a,
                  "METHOD[:fastest|:min-energy|:PLAN_ID] or selected (default: selected)");
  cmd->add_option("B", f->b, "The same for the other plan (default: perseus)");
  add_json_flag(*cmd, f->json);
  cmd->callback([f] {
    if (!f->measured.empty()) {
      for (const auto* given : {&f->a, &f->b, &f->plan_b})
        require(given->empty(), "command line", "--measured", f->measured.front(),
                "compares the plan with its measurements; give no second plan (A, B, --plan-b)");
      const auto c = report::compare_measured(plan_folder(f->plan), f->measured);
      std::cout << (f->json ? report::to_json(c).dump(2) + "\n" : report::render_text(c));
      return;
    }
    const auto a = report::parse_plan_ref(f->a.empty() ? "selected" : f->a, "command line");
    const auto b = report::parse_plan_ref(f->b.empty() ? "perseus" : f->b, "command line");
    const auto files_a = plan_of(f->plan);
    const auto c = f->plan_b.empty() ? report::compare_plans(files_a, a, files_a, b)
                                     : report::compare_plans(files_a, a, plan_of(f->plan_b), b);
    std::cout << (f->json ? report::to_json(c).dump(2) + "\n" : report::render_text(c));
  });
}

}  // namespace kareus::cli
