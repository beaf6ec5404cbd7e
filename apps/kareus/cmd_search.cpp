// SPDX-License-Identifier: Apache-2.0
// kareus search: the time-energy frontier of one partition key (or all of them) on the emulator,
// through the measurement store.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <optional>

#include "commands.hpp"
#include "common_flags.hpp"
#include "kareus/core/error.hpp"
#include "kareus/core/json.hpp"
#include "kareus/core/output_set.hpp"
#include "kareus/core/progress.hpp"
#include "kareus/core/table.hpp"
#include "kareus/core/wrap.hpp"
#include "kareus/scaleout/store_sink.hpp"
#include "kareus/store/partition_search.hpp"
#include "scaleout_cli.hpp"
#include "workload_flags.hpp"

namespace kareus::cli {
namespace {

struct SearchFlags {
  WorkloadFlags workload;
  std::string partition = "all";
  std::string strategy = "kareus";
  std::optional<std::size_t> budget;
  std::uint64_t seed = 0;
  StoreFlags store;
  double noise = 0.0;
  std::string out;
  bool json = false;
  bool quiet = false;
};

// Relative noise above this makes a reading meaningless (a negative time within 3 sigma).
constexpr double kMaxNoise = 0.3;

Json point_json(const std::string& key, const store::PartitionPoint& p) {
  Json config = p.config.to_json();
  return {{"partition", key},
          {"config", config},
          {"time_s", p.time.value()},
          {"energy_j", p.total_energy.value()},
          {"dynamic_energy_j", p.dynamic_energy.value()},
          {"reused", p.reused}};
}

Json partition_json(const store::PartitionSearchResult& r) {
  Json frontier = Json::array();
  for (const auto& p : r.frontier) frontier.push_back(point_json(r.partition_key, p));
  Json frontier_dynamic = Json::array();
  for (const auto& p : r.frontier_dynamic) {
    frontier_dynamic.push_back(point_json(r.partition_key, p));
  }
  const search::SearchSummary& s = r.summary;
  return {{"partition", r.partition_key},
          {"configurations", s.configurations},
          {"frontier", frontier},
          {"frontier_dynamic", frontier_dynamic},
          {"measurements",
           {{"taken", s.measurements_taken},
            {"reused", s.measurements_reused},
            {"total", s.measurements()}}},
          {"batches", s.batches},
          {"repeats", s.repeats},
          {"noise", {{"time", s.noise_time}, {"dynamic_energy", s.noise_energy}}},
          {"confidence", s.confidence ? Json(*s.confidence) : Json(nullptr)},
          {"hypervolume", s.hypervolume},
          {"gpu_hours", s.gpu_hours},
          {"gpu_hours_reused", r.reused_gpu_hours},
          {"stop_reason", search::to_string(s.stop_reason)}};
}

std::string frontier_csv(const std::vector<store::PartitionSearchResult>& results) {
  std::string out = "partition,config,slot,comm_sms,clock_mhz,time_s,energy_j,dynamic_energy_j\n";
  for (const auto& r : results) {
    for (const auto& p : r.frontier) {
      out += fmt::format("{},{},{},{},{},{:.9g},{:.9g},{:.9g}\n", r.partition_key, p.config.key(),
                         p.config.slot, p.config.comm_sms, format_number(p.config.clock.value()),
                         p.time.value(), p.total_energy.value(), p.dynamic_energy.value());
    }
  }
  return out;
}

std::string report(const std::vector<store::PartitionSearchResult>& results) {
  std::string out;
  for (const auto& r : results) {
    out +=
        wrap(r.summary.to_string() + fmt::format(" [{}]", r.partition_key), kLineWidth, "", "  ");
    TextTable t({"config", "clock MHz", "comm SMs", "slot", "time ms", "energy J", "dynamic J"});
    for (const auto& p : r.frontier) {
      t.add_row({p.config.key(), format_number(p.config.clock.value()),
                 std::to_string(p.config.comm_sms), p.config.slot,
                 fmt::format("{:.4f}", to_milliseconds(p.time)),
                 fmt::format("{:.4f}", p.total_energy.value()),
                 fmt::format("{:.4f}", p.dynamic_energy.value())});
    }
    out += t.render() + "\n";
  }
  return out;
}

void run(const SearchFlags& flags) {
  const scaleout::Session mpi;
  const workload::Workload w = flags.workload.resolve();
  const scaleout::ExecutorFactory make_executor = worker_executors(flags.seed, flags.noise);
  if (!mpi.coordinator()) return mpi.serve({w}, make_executor);
  partition::require_nanobatch_split(w, "command line");
  const search::Strategy strategy = search::parse_strategy(flags.strategy);
  require(flags.noise >= 0 && flags.noise <= kMaxNoise, "command line", "--noise",
          format_number(flags.noise), fmt::format("must be in [0, {}]", format_number(kMaxNoise)));
  require(!flags.budget || *flags.budget > 0, "command line", "--budget",
          std::to_string(flags.budget.value_or(0)), "must be a positive number of measurements");
  require(flags.out.empty() || flags.out.ends_with(".csv") || flags.out.ends_with(".json"),
          "command line", "--out", flags.out, "a file name ending in .csv or .json");
  if (!flags.out.empty()) check_output_file(flags.out, "command line", "--out");
  require(!(flags.store.no_db && !flags.store.db.empty()), "command line", "--no-db",
          "with --db " + flags.store.db, "give either --db PATH or --no-db");

  std::vector<partition::Partition> parts;
  if (flags.partition == "all") {
    parts = partition::representative_partitions(w);
  } else {
    parts.push_back(store::find_partition(w, flags.partition));
  }
  std::unique_ptr<store::Store> db;
  if (!flags.store.no_db) {
    db = std::make_unique<store::Store>(flags.store.path());
  }
  const auto executor = mpi.executor(0, make_executor(w),
                                     db ? scaleout::commit_to(*db, w) : scaleout::MeasuredSink{});

  std::vector<store::PartitionSearchResult> results;
  for (const partition::Partition& p : parts) {
    // The bar is made on the first report, which knows the planned number of measurements.
    std::optional<Progress> progress;
    store::PartitionSearchOptions options;
    options.search.strategy = strategy;
    options.search.seed = flags.seed;
    options.search.budget = flags.budget;
    options.store = db.get();
    options.search.on_progress = [&progress, &p, &flags](const search::SearchProgress& s) {
      if (!progress) progress.emplace("search " + p.key, s.planned, !flags.quiet);
      progress->update(s.measurements, fmt::format("{:.3f} GPU-h", s.gpu_hours));
    };
    results.push_back(store::search_partition(w, p, *executor, options));
    if (progress) {
      const auto& r = results.back();
      progress->finish(fmt::format("measurements ({} reused), {:.3f} GPU-h",
                                   r.summary.measurements_reused,
                                   r.summary.gpu_hours + r.reused_gpu_hours));
    }
  }

  Json doc{{"workload", w.to_json()},      {"strategy", search::to_string(strategy)},
           {"seed", flags.seed},           {"noise", flags.noise},
           {"executor", executor->name()}, {"db", db ? db->path().string() : ""}};
  Json partitions = Json::array();
  std::size_t taken = 0;
  std::size_t reused = 0;
  double gpu_hours = 0;
  double gpu_hours_reused = 0;
  for (const auto& r : results) {
    partitions.push_back(partition_json(r));
    taken += r.summary.measurements_taken;
    reused += r.summary.measurements_reused;
    gpu_hours += r.summary.gpu_hours;
    gpu_hours_reused += r.reused_gpu_hours;
  }
  doc["partitions"] = partitions;
  doc["measurements"] = {{"taken", taken}, {"reused", reused}, {"total", taken + reused}};
  doc["gpu_hours"] = gpu_hours;
  doc["gpu_hours_reused"] = gpu_hours_reused;

  const std::string text = flags.json ? doc.dump(2) + "\n" : report(results);
  if (!flags.out.empty()) {
    write_file_atomically(flags.out,
                          flags.out.ends_with(".csv") ? frontier_csv(results) : doc.dump(2) + "\n");
  }
  std::cout << text;
  if (!flags.json) {
    // The search costs what all its measurements cost; the store only moves who paid.
    std::cout << fmt::format(
        "total: {} measurements ({} taken, {} reused), {:.3f} GPU-hours ({:.3f} taken now, "
        "{:.3f} paid by earlier runs){}\n",
        taken + reused, taken, reused, gpu_hours + gpu_hours_reused, gpu_hours, gpu_hours_reused,
        flags.out.empty() ? "" : ", frontier written to " + flags.out);
  }
}

}  // namespace

void register_search_command(CLI::App& app) {
  auto flags = std::make_shared<SearchFlags>();
  auto* cmd = app.add_subcommand(
      "search", "Search the time-energy frontier of partition configurations on the emulator");
  flags->workload.add_to(*cmd);
  flags->workload.add_gpu_file_to(*cmd);
  cmd->add_option("--partition", flags->partition, "Partition key (fwd_attn, ...) or 'all'")
      ->capture_default_str();
  cmd->add_option("--strategy", flags->strategy, "exhaustive, random, paper or kareus")
      ->capture_default_str();
  cmd->add_option("--budget", flags->budget, "Most measurements per partition");
  cmd->add_option("--seed", flags->seed, "Seed of every random choice and of the noise")
      ->capture_default_str();
  flags->store.add_to(*cmd, "Measure everything afresh, store nothing");
  cmd->add_option("--noise", flags->noise, "Relative measurement noise of the emulator (sigma)")
      ->capture_default_str();
  cmd->add_option("--out", flags->out, "Write the frontier to FILE.csv or FILE.json");
  add_json_flag(*cmd, flags->json);
  add_quiet_flag(*cmd, flags->quiet);
  cmd->callback([flags] { run(*flags); });
}

}  // namespace kareus::cli
