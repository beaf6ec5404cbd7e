// SPDX-License-Identifier: Apache-2.0
// Quality benchmark: what per-partition clocks add to Kareus plans over per-instruction clocks
// on the paper's ten A100 workloads, at clock-switch latencies of 0 (ideal), 1, 10 and 25 ms.
// Prints the markdown table of docs/benchmarks/clock_granularity.md. Usage:
//   bench_clock_granularity [workload.json ...]   (default: the paper's ten in data/workloads/)
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include <unistd.h>

#include "kareus/core/error.hpp"
#include "kareus/core/paths.hpp"
#include "kareus/core/table.hpp"
#include "kareus/executor/executor.hpp"
#include "kareus/planner/planner.hpp"
#include "kareus/planner/selection.hpp"
#include "kareus/search/hypervolume.hpp"

namespace {

using namespace kareus;
using namespace kareus::planner;
using workload::Direction;

// Kareus §6: the ten A100 testbed configurations (data/workloads/README.md).
const std::vector<std::string> kPaperWorkloads = {
    "llama3.2-3b_tp8_mbs8_seq4096",     "llama3.2-3b_cp2_tp4_mbs8_seq4096",
    "llama3.2-3b_cp2_tp4_mbs8_seq8192", "llama3.2-3b_cp2_tp4_mbs16_seq4096",
    "qwen3-1.7b_tp8_mbs8_seq4096",      "qwen3-1.7b_tp8_mbs8_seq8192",
    "qwen3-1.7b_tp8_mbs16_seq4096",     "qwen3-1.7b_cp2_tp4_mbs8_seq4096",
    "qwen3-1.7b_cp2_tp4_mbs8_seq8192",  "qwen3-1.7b_cp2_tp4_mbs16_seq4096"};

const std::vector<double> kLatenciesMs = {0, 1, 10, 25};

double hypervolume(const MethodResult& m, search::Point2 reference) {
  std::vector<search::Point2> pts;
  for (const auto& p : m.frontier) pts.push_back({p.time.value(), p.energy.value()});
  return search::hypervolume_2d(pts, reference);
}

// The planner's own partition search, answered from the store it filled, so that the options can
// be checked against direct emulation with the stall power the planner charged.
KeyFrontiers stored_keys(const workload::Workload& w, store::Store& db) {
  executor::EmulatorExecutor exec(emulator::Emulator(w.gpu));
  store::PartitionSearchOptions so;
  so.store = &db;
  KeyFrontiers keys;
  for (const auto& p : partition::representative_partitions(w))
    keys.emplace(p.key, store::search_partition(w, p, exec, so));
  return keys;
}

struct Check {
  std::size_t switching_options = 0;
  double worst_deviation = 0;  // largest |predicted / direct - 1| of time or dynamic energy
};

Check check_against_emulation(const workload::Workload& w, const MethodResult& m,
                              const KeyFrontiers& keys, const PartitionClockOptions& options) {
  const emulator::Emulator emu(w.gpu);
  Check c;
  for (int stage = 0; stage < w.parallelism.pp; ++stage)
    for (Direction d : {Direction::kForward, Direction::kBackward}) {
      const Watts power = switch_power_of(w, emu, stage, d, w.gpu.search_clocks(), keys, options);
      for (const auto& o : m.option_sets[2 * stage + (d == Direction::kBackward ? 1 : 0)]) {
        if (o.step_clocks.empty()) continue;
        ++c.switching_options;
        const auto direct = emulate_step_clocks(w, emu, stage, d, o, options.switch_latency, power);
        c.worst_deviation = std::max({c.worst_deviation, std::abs(o.time / direct.time - 1),
                                      std::abs(o.dynamic_energy / direct.dynamic_energy - 1)});
      }
    }
  return c;
}

std::string pct(const std::optional<double>& v) {
  return v ? fmt::format("{:.2f} %", 100 * *v) : "-";
}

}  // namespace

int main(int argc, char** argv) try {
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) files.emplace_back(argv[i]);
  if (files.empty())
    for (const auto& name : kPaperWorkloads)
      files.push_back(data_dir() / "workloads" / (name + ".json"));

  std::vector<std::string> header = {"workload",
                                     "granularity",
                                     "switch ms",
                                     "max-thr time s",
                                     "max-thr energy J",
                                     "energy at instruction's max-thr time",
                                     "iso-time vs perseus",
                                     "HV ratio",
                                     "options with switches",
                                     "direct-emulation dev"};
  TextTable table(header);
  const auto db_path = std::filesystem::temp_directory_path() /
                       fmt::format("kareus_bench_granularity_{}.sqlite", ::getpid());
  for (const auto& file : files) {
    const auto w = workload::make_workload(workload::read_workload_request(file.string()));
    const std::string name = file.stem().string();
    for (const char* suffix : {"", "-wal", "-shm"})
      std::filesystem::remove(db_path.string() + suffix);
    store::Store db(db_path);
    PlanOptions base;
    base.methods = {Method::kPerseus, Method::kKareus};
    base.store = &db;
    std::cerr << name << ": instruction granularity\n";
    const auto instruction = plan(w, base);
    const auto& perseus = instruction.methods.at(Method::kPerseus);
    const auto& ki = instruction.methods.at(Method::kKareus);
    const search::Point2 reference{ki.frontier.back().time.value() * 1.05,
                                   ki.fastest().energy.value() * 1.05};
    const double hv_instruction = hypervolume(ki, reference);
    table.add_row({name, "instruction", "-", fmt::format("{:.4f}", ki.fastest().time.value()),
                   fmt::format("{:.0f}", ki.fastest().energy.value()), "-",
                   pct(instruction.metrics.at(Method::kKareus).iso_time_energy_reduction), "1.0000",
                   "-", "-"});
    const auto keys = stored_keys(w, db);
    for (double ms : kLatenciesMs) {
      std::cerr << name << ": partition granularity, " << ms << " ms per switch\n";
      PlanOptions po = base;
      po.methods = {Method::kKareus};
      po.clock_granularity = ClockGranularity::kPartition;
      po.partition_clocks.switch_latency = milliseconds(ms);
      const auto r = plan(w, po);
      const auto& kp = r.methods.at(Method::kKareus);
      const auto metrics = compute_metrics(kp, nullptr, &perseus);
      const auto check = check_against_emulation(w, kp, keys, po.partition_clocks);
      table.add_row(
          {name, "partition", fmt::format("{:g}", ms),
           fmt::format("{:.4f}", kp.fastest().time.value()),
           fmt::format("{:.0f}", kp.fastest().energy.value()),
           fmt::format("{:+.2f} %",
                       100 * (select_by_deadline(kp, ki.fastest().time * (1 + 1e-9)).energy /
                                  ki.fastest().energy -
                              1)),
           pct(metrics.iso_time_energy_reduction),
           fmt::format("{:.4f}", hypervolume(kp, reference) / hv_instruction),
           std::to_string(check.switching_options),
           check.switching_options ? fmt::format("{:.2f} %", 100 * check.worst_deviation) : "-"});
    }
  }
  for (const char* suffix : {"", "-wal", "-shm"})
    std::filesystem::remove(db_path.string() + suffix);
  std::cout << table.render_markdown();
  return 0;
} catch (const kareus::Error& e) {
  std::cerr << "bench_clock_granularity: " << e.what() << "\n";
  return 2;
}
