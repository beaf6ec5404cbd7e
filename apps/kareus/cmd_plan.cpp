// kareus plan: the main job. Iteration time-energy frontiers of the four methods side by side,
// a schedule chosen by the user's constraint, and the files the runtime needs.
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>

#include "commands.hpp"
#include "kareus/core/error.hpp"
#include "kareus/core/table.hpp"
#include "kareus/partition/partition.hpp"
#include "kareus/planner/artifact_export.hpp"
#include "kareus/planner/enforceable.hpp"
#include "kareus/planner/planner.hpp"
#include "kareus/report/partitions_file.hpp"
#include "kareus/version.hpp"
#include "report_output.hpp"
#include "scaleout_cli.hpp"
#include "workload_flags.hpp"

namespace kareus::cli {
namespace {

struct PlanFlags {
  WorkloadFlags workload;
  std::string methods = "megatron,perseus,nanobatch-perseus,kareus";
  std::string strategy = "kareus";
  std::uint64_t seed = 0;
  std::string db;
  double noise = 0;
  std::optional<double> deadline;
  std::optional<double> energy_budget;
  bool max_throughput = false;
  std::string out;
  std::string export_artifact;
  std::string report;
  double unit_time_ms = 1.0;
  std::string clock_granularity = "instruction";
  double switch_latency_ms = kDefaultSwitchLatency.value() * 1e3;
  bool json = false;
  bool quiet = false;
  std::string enforceable = "all";
};

std::vector<planner::Method> parse_methods(const std::string& text) {
  std::vector<planner::Method> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    out.push_back(planner::parse_method(item));
  }
  if (out.empty())
    throw Error::invalid("command line", "--methods", text, "give at least one method");
  return out;
}

std::string pct(const std::optional<double>& v) {
  return v ? fmt::format("{:+.1f}%", 100 * *v) : "-";
}

Json point_json(const planner::IterationPoint& p) {
  return {{"time_s", p.time.value()},
          {"energy_j", p.energy.value()},
          {"dynamic_energy_j", p.dynamic_energy.value()},
          {"plan", p.plan}};
}

Json metrics_json(const planner::Metrics& m) {
  auto opt = [](const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); };
  return {{"max_throughput_time_reduction", opt(m.max_throughput_time_reduction)},
          {"max_throughput_energy_reduction", opt(m.max_throughput_energy_reduction)},
          {"iso_time_energy_reduction", opt(m.iso_time_energy_reduction)},
          {"iso_energy_time_reduction", opt(m.iso_energy_time_reduction)}};
}

// The method whose schedule is exported: kareus when planned, else the last one asked for.
planner::Method primary(const std::vector<planner::Method>& methods) {
  for (auto m : methods)
    if (m == planner::Method::kKareus) return m;
  return methods.back();
}

std::string frontier_csv(const planner::MethodResult& m) {
  std::string csv = "time_s,energy_j,dynamic_energy_j,plan\n";
  for (const auto& p : m.frontier)
    csv += fmt::format("{:.6f},{:.3f},{:.3f},{}\n", p.time.value(), p.energy.value(),
                       p.dynamic_energy.value(), p.plan);
  return csv;
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
  const auto methods = parse_methods(f.methods);
  if (std::any_of(methods.begin(), methods.end(), [](auto m) {
        return m != planner::Method::kMegatron && m != planner::Method::kPerseus;
      }))
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
  cmd->add_option("--methods", f->methods,
                  "Comma-separated: megatron, perseus, nanobatch-perseus, kareus, "
                  "kareus-exhaustive")
      ->capture_default_str();
  cmd->add_option("--strategy", f->strategy,
                  "Partition search for the kareus method: kareus, paper, random or exhaustive")
      ->capture_default_str();
  cmd->add_option("--seed", f->seed, "Seed of every random choice")->capture_default_str();
  cmd->add_option("--db", f->db, "Measurement store (default ~/.cache/kareus/measurements.sqlite)");
  cmd->add_option("--noise", f->noise, "Relative measurement noise of the emulator (e.g. 0.03)");
  auto* deadline = cmd->add_option("--deadline", f->deadline,
                                   "Select the least-energy plan within this iteration time (s)");
  auto* budget = cmd->add_option("--energy-budget", f->energy_budget,
                                 "Select the fastest plan within this energy per iteration (J)");
  auto* fastest =
      cmd->add_flag("--max-throughput", f->max_throughput, "Select the fastest plan (the default)");
  deadline->excludes(budget)->excludes(fastest);
  budget->excludes(fastest);
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
  cmd->add_flag("--json", f->json, "Print summary.json on stdout");
  cmd->add_flag("--quiet", f->quiet, "No progress on stderr");
  // One workload on the coordinator rank; `index` is its place in the command line's sweep.
  const auto plan_one = [](const std::shared_ptr<PlanFlags>& f, const workload::Workload& w,
                           const scaleout::Session& mpi, std::size_t index) {
    planner::PlanOptions opt;
    opt.methods = parse_methods(f->methods);
    // Checked before the store is opened or anything is planned: a refused run writes nothing.
    if (std::any_of(opt.methods.begin(), opt.methods.end(), [](auto m) {
          return m != planner::Method::kMegatron && m != planner::Method::kPerseus;
        }))
      partition::require_nanobatch_split(w, "command line");
    opt.strategy = search::parse_strategy(f->strategy);
    opt.seed = f->seed;
    require(f->noise >= 0 && f->noise < 0.5, "command line", "--noise", format_number(f->noise),
            "must be in [0, 0.5)");
    opt.noise_sigma = f->noise;
    require(f->unit_time_ms > 0, "command line", "--unit-time-ms", format_number(f->unit_time_ms),
            "must be positive");
    opt.unit_time = milliseconds(f->unit_time_ms);
    opt.clock_granularity = planner::parse_clock_granularity(f->clock_granularity);
    require(std::isfinite(f->switch_latency_ms) && f->switch_latency_ms >= 0, "command line",
            "--switch-latency-ms", format_number(f->switch_latency_ms),
            "must be a number of milliseconds >= 0");
    opt.partition_clocks.switch_latency = milliseconds(f->switch_latency_ms);
    if (opt.clock_granularity == planner::ClockGranularity::kPartition)
      require(f->export_artifact.empty(), "command line", "--export-artifact", f->export_artifact,
              "the artifact's format has one clock per instruction; use --clock-granularity "
              "instruction");
    // Checked before planning, which can take minutes, rather than when selecting.
    if (f->deadline)
      require(*f->deadline > 0, "command line", "--deadline", format_number(*f->deadline),
              "must be a positive number of seconds");
    if (f->energy_budget)
      require(*f->energy_budget > 0, "command line", "--energy-budget",
              format_number(*f->energy_budget), "must be a positive number of joules");
    // Loaded before planning: a missing charting library must not cost a plan.
    std::optional<report::ChartLibrary> library;
    if (!f->report.empty())
      library = report::ChartLibrary::load(report::ChartLibrary::default_dir());
    std::unique_ptr<store::Store> db;
    const bool searches = std::any_of(opt.methods.begin(), opt.methods.end(), [](auto m) {
      return m == planner::Method::kKareus || m == planner::Method::kKareusExhaustive;
    });
    if (searches) {
      db = std::make_unique<store::Store>(f->db.empty() ? store::Store::default_path()
                                                        : std::filesystem::path(f->db));
      opt.store = db.get();
    }
    opt.make_executor = plan_executors(mpi, index, opt);
    const bool tty = isatty(fileno(stderr)) != 0;
    if (!f->quiet) {
      opt.on_progress = [tty](const std::string& line) {
        std::fputs(tty ? ("\r" + line + "\x1b[K").c_str() : (line + "\n").c_str(), stderr);
      };
    }
    const auto result = planner::plan(w, opt);
    if (!f->quiet && tty) std::fputs("\n", stderr);

    const auto enforceable = planner::parse_enforceable(f->enforceable);
    const planner::Method chosen =
        enforceable == planner::Enforceable::kAll
            ? primary(opt.methods)
            : planner::best_enforceable_method(
                  result, enforceable,
                  f->deadline ? std::optional(Seconds(*f->deadline)) : std::nullopt,
                  f->energy_budget ? std::optional(Joules(*f->energy_budget)) : std::nullopt);
    const auto& cm = result.methods.at(chosen);
    const planner::IterationPoint* selected = &planner::select_max_throughput(cm);
    std::string selection = "max-throughput";
    if (f->deadline) {
      selected = &planner::select_by_deadline(cm, Seconds(*f->deadline));
      selection = fmt::format("deadline {:g} s", *f->deadline);
    } else if (f->energy_budget) {
      selected = &planner::select_by_energy_budget(cm, Joules(*f->energy_budget));
      selection = fmt::format("energy budget {:g} J", *f->energy_budget);
    }

    Json summary{{"workload", w.to_json()}, {"methods", Json::object()}};
    TextTable table({"method", "fastest s", "energy J", "min-energy s", "energy J", "points",
                     "time vs megatron", "energy vs megatron", "iso-time energy", "iso-energy time",
                     "profiling GPU-h"});
    for (const auto& [m, r] : result.methods) {
      const auto& mt = result.metrics.at(m);
      Json frontier = Json::array();
      for (const auto& p : r.frontier) frontier.push_back(point_json(p));
      Json ten = Json::array();
      for (const auto& p : planner::ten_point_frontier(r)) ten.push_back(point_json(p));
      summary["methods"][planner::to_string(m)] = {{"frontier", frontier},
                                                   {"ten_point_frontier", ten},
                                                   {"max_throughput", point_json(r.fastest())},
                                                   {"min_energy", point_json(r.min_energy())},
                                                   {"frontier_size", r.frontier.size()},
                                                   {"measurements", r.measurements},
                                                   {"measurements_reused", r.measurements_reused},
                                                   {"profiling_gpu_hours", r.profiling_gpu_hours},
                                                   {"metrics", metrics_json(mt)}};
      table.add_row({planner::to_string(m), fmt::format("{:.3f}", r.fastest().time.value()),
                     fmt::format("{:.0f}", r.fastest().energy.value()),
                     fmt::format("{:.3f}", r.min_energy().time.value()),
                     fmt::format("{:.0f}", r.min_energy().energy.value()),
                     std::to_string(r.frontier.size()), pct(mt.max_throughput_time_reduction),
                     pct(mt.max_throughput_energy_reduction), pct(mt.iso_time_energy_reduction),
                     pct(mt.iso_energy_time_reduction),
                     fmt::format("{:.1f}", r.profiling_gpu_hours)});
    }
    summary["metrics"] = metrics_json(result.metrics.at(chosen));
    summary["clock_granularity"] = {
        {"granularity", planner::to_string(opt.clock_granularity)},
        {"switch_latency_s", opt.partition_clocks.switch_latency.value()}};
    summary["provenance"] = {
        {"version", kVersion},
        {"executor", "emulator"},
        {"store", db ? db->path().string() : "none: no method searched partitions"},
        {"noise", f->noise},
        {"seed", f->seed}};
    summary["selected"] = {{"method", planner::to_string(chosen)},
                           {"rule", selection},
                           {"point", point_json(*selected)}};
    const auto schedule = planner::make_schedule(result, chosen, *selected);

    // The page is built from the plan's files, so --report without --out writes them to a
    // scratch folder first.
    const std::filesystem::path dir =
        !f->out.empty() || f->report.empty()
            ? std::filesystem::path(f->out)
            : std::filesystem::temp_directory_path() / fmt::format("kareus-plan-{}", getpid());
    if (!dir.empty()) {
      for (const auto& [m, r] : result.methods)
        write_file_atomically(dir / fmt::format("frontier_{}.csv", planner::to_string(m)),
                              frontier_csv(r));
      write_file_atomically(dir / "schedule.json", to_json(schedule));
      write_file_atomically(dir / "summary.json", summary.dump(2) + "\n");
      write_file_atomically(dir / "partitions.json", report::partitions_json(cm).dump(2) + "\n");
    }
    if (library) {
      struct RemoveScratch {
        std::filesystem::path dir;
        ~RemoveScratch() {
          if (!dir.empty()) std::filesystem::remove_all(dir);
        }
      } scratch{f->out.empty() ? dir : std::filesystem::path()};
      write_plan_report(dir, f->report, *library);
    }
    if (!f->export_artifact.empty()) planner::export_artifact(result, chosen, f->export_artifact);

    if (f->json) {
      std::cout << summary.dump(2) << "\n";
      return;
    }
    std::string text = fmt::format(
        "{} on {} x {} (TP{} CP{} PP{} DP{}, {} microbatches of {} x {}); energy is per "
        "iteration for the whole job; reductions are positive when better\n\n",
        w.model.name, w.total_gpus(), w.gpu.name, w.parallelism.tp, w.parallelism.cp,
        w.parallelism.pp, w.parallelism.dp, w.parallelism.microbatches,
        w.parallelism.microbatch_size, w.parallelism.sequence_length);
    text += table.render();
    if (opt.clock_granularity == planner::ClockGranularity::kPartition)
      text += fmt::format("\nkareus clocks per partition, {:g} ms per clock switch\n",
                          f->switch_latency_ms);
    text += fmt::format("\nselected ({}, {}): {:.3f} s, {:.0f} J per iteration\n",
                        planner::to_string(chosen), selection, selected->time.value(),
                        selected->energy.value());
    if (!f->out.empty())
      text += fmt::format("wrote frontiers, schedule.json, summary.json, partitions.json to {}\n",
                          f->out);
    if (library) text += fmt::format("wrote report {}\n", f->report);
    std::cout << text;
  };
  cmd->callback([f, plan_one] {
    const scaleout::Session mpi;
    const auto workloads = f->workload.resolve_all();
    if (!mpi.coordinator())
      return mpi.serve(workload_list(workloads), worker_executors(f->seed, f->noise));
    if (workloads.size() == 1) return plan_one(f, workloads.front().workload, mpi, 0);
    check_sweep(*f, workloads);
    for (std::size_t i = 0; i < workloads.size(); ++i)
      plan_one(sweep_flags(f, workloads[i].name), workloads[i].workload, mpi, i);
  });
}

}  // namespace kareus::cli
