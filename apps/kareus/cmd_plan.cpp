// SPDX-License-Identifier: Apache-2.0
// kareus plan: the main job. Iteration time-energy frontiers of the four methods side by side,
// a schedule chosen by the user's constraint, and the files the runtime needs.
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>

#include "commands.hpp"
#include "common_flags.hpp"
#include "kareus/core/error.hpp"
#include "kareus/partition/partition.hpp"
#include "kareus/planner/run.hpp"
#include "kareus/report/chart_library.hpp"
#include "plan_output.hpp"
#include "plan_progress.hpp"
#include "plan_write.hpp"
#include "scaleout_cli.hpp"
#include "workload_flags.hpp"

namespace kareus::cli {
namespace {

struct PlanFlags {
  WorkloadFlags workload;
  std::string methods = "megatron,perseus,nanobatch-perseus,kareus";
  std::string strategy = "kareus";
  std::uint64_t seed = 0;
  StoreFlags store;
  double noise = 0;
  std::optional<double> deadline;
  std::optional<double> energy_budget;
  int milp_nodes = 0;
  bool max_throughput = false;
  std::string out;
  std::string export_artifact;
  std::string report;
  double unit_time_ms = 1.0;
  std::string clock_granularity = "instruction";
  double switch_latency_ms = kDefaultSwitchLatency.value() * 1e3;
  bool json = false;
  bool quiet = false;
  bool verbose = false;
  bool wide = false;
  std::string enforceable = "all";
  // Said on stderr once the flags have passed their checks (default_methods_for).
  std::string note;
};

// The command line's spelling of the request's fields, and their units where they differ.
const std::map<std::string, planner::FieldSpelling> kFlagSpellings{
    {"methods", {"--methods"}},
    {"noise_sigma", {"--noise"}},
    {"unit_time_s", {"--unit-time-ms", 1e3}},
    {"switch_latency_s", {"--switch-latency-ms", 1e3}},
    {"deadline_s", {"--deadline"}},
    {"energy_budget_j", {"--energy-budget"}},
    {"milp_nodes", {"--milp-nodes"}},
    {"enforceable", {"--enforceable"}}};

// Flags -> request; the library checks it (PlanRequest::check).
planner::PlanRequest request_of(const PlanFlags& f) {
  planner::PlanRequest r;
  r.where = "command line";
  r.spellings = kFlagSpellings;
  r.methods = planner::parse_methods(f.methods);
  r.strategy = search::parse_strategy(f.strategy);
  r.seed = f.seed;
  r.noise_sigma = f.noise;
  r.unit_time = milliseconds(f.unit_time_ms);
  r.clock_granularity =
      planner::parse_clock_granularity(f.clock_granularity, r.where, "--clock-granularity");
  r.switch_latency = milliseconds(f.switch_latency_ms);
  if (f.deadline) r.selection = {planner::SelectionRule::kDeadline, *f.deadline};
  if (f.energy_budget) r.selection = {planner::SelectionRule::kEnergyBudget, *f.energy_budget};
  r.selection.milp_nodes = f.milp_nodes;
  r.enforceable = planner::parse_enforceable(f.enforceable, r.where, "--enforceable");
  return r;
}

// A sweep writes each workload's files under --out/NAME (and its page to REPORT-NAME.html); a
// deadline or budget in seconds or joules belongs to one workload, and one JSON document per run
// is what --json promises. Every workload is checked before the first is planned, so a refused
// sweep writes nothing.
void check_sweep(const PlanFlags& f, const std::vector<NamedWorkload>& workloads) {
  require(!f.json, "command line", "--json", "with several workloads",
          "give --out DIR, which gets one folder per workload");
  require(!f.deadline && !f.energy_budget, "command line",
          f.deadline ? "--deadline" : "--energy-budget", "with several workloads",
          "a bound belongs to one workload; sweep with --max-throughput");
  if (planner::needs_nanobatch_split(planner::parse_methods(f.methods)))
    for (const auto& w : workloads) partition::require_nanobatch_split(w.workload, w.name);
}

std::shared_ptr<PlanFlags> sweep_flags(const std::shared_ptr<PlanFlags>& f,
                                       const std::string& name) {
  auto one = std::make_shared<PlanFlags>(*f);
  if (!f->out.empty()) one->out = (std::filesystem::path(f->out) / name).string();
  if (!f->export_artifact.empty())
    one->export_artifact = (std::filesystem::path(f->export_artifact) / name).string();
  if (!f->report.empty()) {
    // report.html -> report-NAME.html beside it: one page per workload.
    const std::filesystem::path page(f->report);
    one->report =
        (page.parent_path() / (page.stem().string() + "-" + name + page.extension().string()))
            .string();
  }
  return one;
}

// The default methods where every workload's microbatch splits into two nanobatches; without the
// nanobatch methods where one does not, and `note` says so: the shortest command must run.
std::string default_methods_for(const std::vector<NamedWorkload>& workloads,
                                const std::string& methods, std::string& note) {
  for (const auto& w : workloads) {
    const int mbs = w.workload.parallelism.microbatch_size;
    if (mbs % 2 == 0) continue;
    note = fmt::format(
        "note: microbatch size {} does not split into two nanobatches; planning megatron and "
        "perseus only (an even --mbs adds nanobatch-perseus and kareus)",
        mbs);
    return "megatron,perseus";
  }
  return methods;
}

std::vector<workload::Workload> workload_list(const std::vector<NamedWorkload>& named) {
  std::vector<workload::Workload> out;
  for (const auto& n : named) out.push_back(n.workload);
  return out;
}

}  // namespace

void register_plan_command(CLI::App& app) {
  auto f = std::make_shared<PlanFlags>();
  auto* cmd = app.add_subcommand(
      "plan", "Plan a training job: frontiers of megatron, perseus, nanobatch-perseus, kareus");
  f->workload.add_to(*cmd);
  f->workload.add_gpu_file_to(*cmd);
  const auto* methods =
      cmd->add_option("--methods", f->methods,
                      "Comma-separated: megatron, perseus, nanobatch-perseus, kareus, "
                      "kareus-exhaustive")
          ->capture_default_str();
  cmd->add_option("--strategy", f->strategy,
                  "Partition search for the kareus method: kareus, paper, random or exhaustive")
      ->capture_default_str();
  cmd->add_option("--seed", f->seed, "Seed of every random choice")->capture_default_str();
  const auto store = f->store.add_to(*cmd, "Measure every partition afresh, store nothing");
  store.no_db->excludes(store.db);
  cmd->add_option("--noise", f->noise, "Relative measurement noise of the emulator (e.g. 0.03)");
  auto* deadline = cmd->add_option("--deadline", f->deadline,
                                   "Select the least-energy plan within this iteration time (s)");
  auto* budget = cmd->add_option("--energy-budget", f->energy_budget,
                                 "Select the fastest plan within this energy per iteration (J)");
  auto* fastest =
      cmd->add_flag("--max-throughput", f->max_throughput, "Select the fastest plan (the default)");
  deadline->excludes(budget)->excludes(fastest);
  budget->excludes(fastest);
  cmd->add_option("--milp-nodes", f->milp_nodes,
                  "With --deadline: refine each method's selected plan by exact sub-MILPs (CBC) "
                  "over windows of 64 instructions, at most this many nodes each (0: off); never "
                  "costlier, same result every run")
      ->capture_default_str();
  cmd->add_option("--out", f->out,
                  "Write frontiers (CSV), schedule.json, summary.json and partitions.json here");
  cmd->add_option("--export-artifact", f->export_artifact,
                  "Also write the Kareus artifact's freqs/scheds_pipeline_%05d.py files here");
  cmd->add_option("--report", f->report,
                  "Also write an HTML page of the plan here (kareus report; docs/report.md)");
  cmd->add_option("--unit-time-ms", f->unit_time_ms, "Pipeline solver time unit (ms)")
      ->capture_default_str();
  cmd->add_option("--clock-granularity", f->clock_granularity,
                  "Kareus clocks per instruction (the paper) or per partition, paying each switch")
      ->capture_default_str();
  cmd->add_option("--switch-latency-ms", f->switch_latency_ms,
                  "Clock switch latency for --clock-granularity partition (docs/kernel-dvfs.md)")
      ->capture_default_str();
  cmd->add_option("--enforceable", f->enforceable,
                  "Export the best plan the target runtime applies whole: all, or clocks "
                  "(megatron, perseus)")
      ->capture_default_str();
  add_json_flag(*cmd, f->json, "Print summary.json on stdout");
  auto* quiet = add_quiet_flag(*cmd, f->quiet,
                               "No progress; on stdout where files went, or without --out the "
                               "selected plan's line");
  cmd->add_flag("--verbose", f->verbose,
                "Also, per method on stderr, the pipeline solver's steps and where its time went")
      ->excludes(quiet);
  cmd->add_flag(
      "--wide", f->wide,
      "Every column of the table, in joules (default: the main ones, within 120 columns)");
  // One workload on the coordinator rank; `index` is its place in the command line's sweep, and
  // `name` starts its progress lines in a sweep.
  const auto plan_one = [](const std::shared_ptr<PlanFlags>& f, const workload::Workload& w,
                           const scaleout::Session& mpi, std::size_t index,
                           const std::string& name) {
    const planner::PlanRequest request = request_of(*f);
    // Checked before anything is loaded or planned: a refused run writes nothing.
    request.check(w);
    if (index == 0 && !f->note.empty()) fmt::print(stderr, "{}\n", f->note);
    if (request.clock_granularity == planner::ClockGranularity::kPartition)
      require(f->export_artifact.empty(), "command line", "--export-artifact", f->export_artifact,
              "the artifact's format has one clock per instruction; use --clock-granularity "
              "instruction");
    // Loaded before planning: a missing charting library must not cost a plan.
    std::optional<report::ChartLibrary> library;
    if (!f->report.empty())
      library = report::ChartLibrary::load(report::ChartLibrary::default_dir());
    planner::Context context;
    // The default store serves the partition searches alone: a run without one creates none.
    if (planner::searches_partitions(request.methods)) context.store = f->store.path();
    context.no_store = "none: --no-db";
    context.executors = [&mpi, index](const planner::PlanOptions& o) {
      return plan_executors(mpi, index, o);
    };
    std::optional<PlanProgressLine> progress;
    if (!f->quiet) {
      progress.emplace(stderr, PlanProgressOptions{.verbose = f->verbose, .workload = name});
      context.on_progress = [&progress](const planner::PlanProgress& p) { (*progress)(p); };
      context.on_solver_progress = [&progress](planner::Method m,
                                               const frontier::PipelineSolverProgress& p) {
        progress->solver(m, p);
      };
      context.on_refine_progress = [&progress](planner::Method m,
                                               const frontier::RefineProgress& p) {
        progress->refine(m, p);
      };
    }
    const planner::PlanOutcome outcome = planner::run(request, w, context);
    progress.reset();
    const Json& summary = outcome.summary;

    write_plan_outputs({f->out, f->export_artifact, f->report}, outcome, library);

    if (f->json) {
      std::cout << summary.dump(2) << "\n";
      return;
    }
    // --quiet keeps what says where the results went, or, when nothing is written, the result.
    std::string text = !f->quiet        ? plan_table(outcome, f->wide)
                       : f->out.empty() ? selected_line(outcome.selected, f->wide)
                                        : "";
    if (!f->out.empty())
      text += fmt::format("wrote frontiers, schedule.json, summary.json, partitions.json to {}\n",
                          f->out);
    if (library) text += fmt::format("wrote report {}\n", f->report);
    std::cout << text;
  };
  cmd->callback([f, plan_one, methods] {
    const scaleout::Session mpi;
    const auto workloads = f->workload.resolve_all();
    if (methods->count() == 0) f->methods = default_methods_for(workloads, f->methods, f->note);
    if (mpi.coordinator()) check_plan_output_paths({f->out, f->export_artifact, f->report});
    if (!mpi.coordinator())
      return mpi.serve(workload_list(workloads), worker_executors(f->seed, f->noise));
    if (workloads.size() == 1) return plan_one(f, workloads.front().workload, mpi, 0, "");
    check_sweep(*f, workloads);
    for (std::size_t i = 0; i < workloads.size(); ++i)
      plan_one(sweep_flags(f, workloads[i].name), workloads[i].workload, mpi, i, workloads[i].name);
  });
}

}  // namespace kareus::cli
