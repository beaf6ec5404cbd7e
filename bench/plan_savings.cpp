// SPDX-License-Identifier: Apache-2.0
// Savings of the four training-plan methods on the emulator: for every workload in
// data/workloads/ (the paper's ten testbed configurations on A100 and on H100, and the
// Llama-3.3-70B large-scale emulation), each method's fastest point and the paper's metrics —
// max-throughput time and energy reduction vs `megatron`, iso-time energy and iso-energy time
// reduction vs `perseus` (docs/plan.md) — and the hypervolume of the `kareus` iteration frontier
// as a fraction of `kareus-exhaustive`'s. Prints markdown (docs/benchmarks/plan_savings.md).
//
// Every search measures afresh (no store), so profiling costs are those of a cold run.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <optional>

#include "kareus/core/error.hpp"
#include "kareus/core/paths.hpp"
#include "kareus/core/table.hpp"
#include "kareus/planner/planner.hpp"
#include "kareus/search/hypervolume.hpp"

namespace {

using namespace kareus;
using planner::Method;

struct Row {
  std::string label;
  workload::Workload w;
  planner::PlanResult result;
  double unit_ms = 0;
  double wall_s = 0;
};

std::string pct(const std::optional<double>& v) {
  return v ? fmt::format("{:+.1f}%", 100 * *v) : "-";
}

// Iteration frontiers are compared with the search's convention: reference point 1.1 x the
// maxima of the points of both frontiers.
double hypervolume_fraction(const planner::MethodResult& a, const planner::MethodResult& b) {
  std::vector<search::Point2> pa, pb;
  search::Point2 ref{0, 0};
  for (const auto* m : {&a, &b}) {
    for (const auto& p : m->frontier) {
      (m == &a ? pa : pb).push_back({p.time.value(), p.energy.value()});
      ref.x = std::max(ref.x, 1.1 * p.time.value());
      ref.y = std::max(ref.y, 1.1 * p.energy.value());
    }
  }
  return search::hypervolume_2d(pa, ref) / search::hypervolume_2d(pb, ref);
}

std::vector<std::filesystem::path> workload_files(const std::filesystem::path& dir,
                                                  const std::string& filter) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".json" &&
        e.path().stem().string().find(filter) != std::string::npos)
      out.push_back(e.path());
  std::sort(out.begin(), out.end());
  if (out.empty())
    throw Error::invalid("command line", "--filter", filter,
                         "matches no workload JSON in " + dir.string());
  return out;
}

std::string method_table(const std::vector<Row>& rows) {
  TextTable t({"workload", "method", "fastest s", "energy J", "points", "time vs Megatron",
               "energy vs Megatron", "iso-time energy vs Perseus", "iso-energy time vs Perseus",
               "profiling GPU-h"});
  for (const auto& r : rows) {
    for (const auto& [m, mr] : r.result.methods) {
      const auto& mt = r.result.metrics.at(m);
      t.add_row({r.label, planner::to_string(m), fmt::format("{:.3f}", mr.fastest().time.value()),
                 fmt::format("{:.0f}", mr.fastest().energy.value()),
                 std::to_string(mr.frontier.size()), pct(mt.max_throughput_time_reduction),
                 pct(mt.max_throughput_energy_reduction), pct(mt.iso_time_energy_reduction),
                 pct(mt.iso_energy_time_reduction), fmt::format("{:.1f}", mr.profiling_gpu_hours)});
    }
  }
  return t.render_markdown();
}

// The `kareus` search against exhaustive search of every partition configuration.
std::string search_table(const std::vector<Row>& rows) {
  TextTable t({"workload", "kareus HV / exhaustive HV", "kareus measurements",
               "exhaustive measurements", "kareus GPU-h", "exhaustive GPU-h", "solver unit ms",
               "plan wall s"});
  for (const auto& r : rows) {
    const auto& k = r.result.methods.at(Method::kKareus);
    const auto& x = r.result.methods.at(Method::kKareusExhaustive);
    t.add_row({r.label, fmt::format("{:.4f}", hypervolume_fraction(k, x)),
               std::to_string(k.measurements), std::to_string(x.measurements),
               fmt::format("{:.1f}", k.profiling_gpu_hours),
               fmt::format("{:.1f}", x.profiling_gpu_hours), fmt::format("{:g}", r.unit_ms),
               fmt::format("{:.1f}", r.wall_s)});
  }
  return t.render_markdown();
}

// The largest of each metric over the rows: what the paper's "up to" figures summarise.
std::string best_table(const std::vector<Row>& rows, Method m) {
  struct Best {
    double value = -1e300;
    std::string where;
  };
  Best time_mt, energy_mt, iso_time, iso_energy;
  auto take = [](Best& b, const std::optional<double>& v, const std::string& label) {
    if (v && *v > b.value) b = {*v, label};
  };
  for (const auto& r : rows) {
    const auto it = r.result.metrics.find(m);
    if (it == r.result.metrics.end()) continue;
    take(time_mt, it->second.max_throughput_time_reduction, r.label);
    take(energy_mt, it->second.max_throughput_energy_reduction, r.label);
    take(iso_time, it->second.iso_time_energy_reduction, r.label);
    take(iso_energy, it->second.iso_energy_time_reduction, r.label);
  }
  TextTable t({"metric", "paper (A100 testbed)", "emulator, up to", "workload"});
  auto row = [&](const std::string& name, const std::string& paper, const Best& b) {
    t.add_row({name, paper, b.where.empty() ? "-" : fmt::format("{:+.1f}%", 100 * b.value),
               b.where.empty() ? "-" : b.where});
  };
  row("max-throughput time vs Megatron", "14.9%", time_mt);
  row("max-throughput energy vs Megatron", "22.1%", energy_mt);
  row("iso-time energy vs Megatron+Perseus", "28.3%", iso_time);
  row("iso-energy time vs Megatron+Perseus", "27.5%", iso_energy);
  return t.render_markdown();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Savings of megatron, perseus, nanobatch-perseus and kareus on every workload"};
  std::string dir = (data_dir() / "workloads").string();
  std::string filter;
  double unit_ms = 1.0;
  double large_unit_ms = 10.0;
  int large_microbatches = 64;
  app.add_option("--workloads", dir, "Folder of workload JSON files")->capture_default_str();
  app.add_option("--filter", filter, "Only workloads whose file name contains this");
  app.add_option("--unit-time-ms", unit_ms, "Pipeline solver time unit")->capture_default_str();
  app.add_option("--large-unit-time-ms", large_unit_ms,
                 "Solver time unit for pipelines of at least --large-microbatches")
      ->capture_default_str();
  app.add_option("--large-microbatches", large_microbatches,
                 "Microbatches per pipeline from which a workload counts as large-scale")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    std::vector<Row> small, large;
    for (const auto& path : workload_files(dir, filter)) {
      const auto w = workload::make_workload(workload::read_workload_request(path.string()));
      const bool is_large = w.parallelism.microbatches >= large_microbatches;
      planner::PlanOptions o;
      o.methods = {Method::kMegatron, Method::kPerseus, Method::kNanobatchPerseus, Method::kKareus,
                   Method::kKareusExhaustive};
      // The solver takes one min cut per unit over a time range and a DAG that both grow with
      // the microbatch count, so 512 microbatches at 1 ms take most of an hour on two cores.
      // Options are quantised per instruction, so the unit must stay small against an
      // instruction's time, not the iteration's: docs/benchmarks/plan_savings.md measures what
      // 10 ms changes at 64 microbatches.
      const double unit = is_large ? large_unit_ms : unit_ms;
      o.unit_time = milliseconds(unit);
      const auto start = std::chrono::steady_clock::now();
      auto result = planner::plan(w, o);
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::cerr << fmt::format("{}: {:.1f} s\n", path.stem().string(), wall);
      (is_large ? large : small)
          .push_back({path.stem().string(), w, std::move(result), unit, wall});
    }
    std::string out;
    for (const auto* rows : {&small, &large}) {
      if (rows->empty()) continue;
      out += fmt::format("## {}\n\n",
                         rows == &large ? "Large-scale emulation" : "Testbed configurations");
      out += "### Kareus: best over these workloads\n\n" + best_table(*rows, Method::kKareus);
      out += "\n### Every method\n\n" + method_table(*rows);
      out += "\n### Partition search: kareus vs exhaustive\n\n" + search_table(*rows) + "\n";
    }
    std::cout << out;
  } catch (const Error& e) {
    std::cerr << "bench_plan_savings: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
