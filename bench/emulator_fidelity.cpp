// SPDX-License-Identifier: Apache-2.0
// How close the emulator comes to real measurements where Kareus earns its keep: the
// published GEMM || AllReduce pairs on A100, the clock-energy curve, and the Kareus artifact's
// real Llama-3.2-3B TP8 frontiers of Perseus, nanobatch-Perseus and Kareus against the same
// methods planned on the emulator. Prints markdown (docs/benchmarks/emulator_fidelity.md).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <filesystem>
#include <iostream>
#include <map>

#include "kareus/core/csv.hpp"
#include "kareus/core/error.hpp"
#include "kareus/core/paths.hpp"
#include "kareus/core/table.hpp"
#include "kareus/executor/instruction.hpp"
#include "kareus/executor/kernel_figures.hpp"
#include "kareus/executor/overlap.hpp"
#include "kareus/planner/planner.hpp"

namespace {

using namespace kareus;
using emulator::ClockPolicy;
using planner::Method;

// Every kernel class on its own against public kernel-level measurements.
std::string kernel_table(const std::filesystem::path& figures) {
  const auto rows = executor::load_kernel_figures(figures);
  TextTable t({"GPU", "kernel", "shape", "clock", "metric", "published", "emulated", "error"});
  for (const char* gpu : {"a100-sxm4-40gb", "a100-sxm4-80gb", "h100-sxm"}) {
    const emulator::Emulator emu(load_gpu(gpu));
    for (const auto& c : executor::check_kernel_figures(emu, rows)) {
      t.add_row({gpu, c.figure.kernel, c.figure.shape, c.figure.clock, c.figure.metric,
                 fmt::format("{:g}", c.figure.published), fmt::format("{:.1f}", c.emulated),
                 fmt::format("{:+.1f} %", 100 * c.relative_error())});
    }
  }
  return t.render();
}

std::string pairs_table(const emulator::Emulator& emu) {
  const auto ar = workload::collective_kernel("ar", workload::Collective::kAllReduce,
                                              64.0 * 1024 * 1024, 4, workload::Link::kNvlink);
  struct Published {
    int ctas;
    const char* stretch;
    const char* hidden;
  };
  TextTable t({"GEMM", "alone ms", "CTAs", "GEMM stretch", "published", "AllReduce stretch",
               "hidden share", "published", "overlapped / serial time", "energy"});
  for (const auto& s : {std::array{4096.0, 8192.0, 4096.0},
                        {8192.0, 8192.0, 8192.0},
                        {16384.0, 8192.0, 8192.0},
                        {8192.0, 4096.0, 2048.0}}) {
    const auto g = workload::gemm_kernel("gemm", s[0], s[1], s[2]);
    for (const Published& p : {Published{1, "1.00-1.09", "0.5-0.9"},
                               {8, "1.2-1.6", "0.4-0.8"},
                               {32, "1.7-2.05", "0-0.3"}}) {
      const auto r =
          executor::emulate_overlap(emu, g, ar, p.ctas, ClockPolicy::locked_at(MHz(1200)));
      const double shorter = std::min(r.compute_alone.time, r.collective_alone.time).value();
      t.add_row({fmt::format("{:g}x{:g}x{:g}", s[0], s[1], s[2]),
                 fmt::format("{:.2f}", to_milliseconds(r.compute_alone.time)),
                 std::to_string(p.ctas), fmt::format("{:.2f}", *r.compute_stretch), p.stretch,
                 fmt::format("{:.2f}", *r.collective_stretch),
                 fmt::format("{:.2f}", (r.serial.time - r.overlapped.time).value() / shorter),
                 p.hidden, fmt::format("{:.3f}", r.overlapped.time / r.serial.time),
                 fmt::format("{:.3f}", r.overlapped.energy / r.serial.energy)});
    }
  }
  return t.render();
}

std::string clock_table(const emulator::Emulator& emu) {
  TextTable t({"what", "emulated", "measured"});
  const auto g = workload::gemm_kernel("gemm", 8192, 8192, 8192);
  const auto e = [&](double mhz) {
    return emu.run_kernel(g, ClockPolicy::locked_at(MHz(mhz))).total_energy().value();
  };
  t.add_row({"large GEMM E(900)/E(1410)", fmt::format("{:.3f}", e(900) / e(1410)), "0.78-0.86"});
  t.add_row({"large GEMM E(1200)/E(1410)", fmt::format("{:.3f}", e(1200) / e(1410)), "0.91"});
  workload::WorkloadRequest req;
  req.model = "llama3.2-3b";
  req.gpu = emu.gpu().name;
  req.parallelism = {8, 1, 2, 1, 8, 4096, 8, workload::Recompute::kFull, {}, 8};
  const auto w = workload::make_workload(req);
  for (auto d : {workload::Direction::kForward, workload::Direction::kBackward}) {
    const auto stage = [&](MHz f) {
      return emulator::run_instruction_sequential(w, emu, 0, d, ClockPolicy::locked_at(f));
    };
    MHz best = emu.gpu().clock_max;
    Joules least = stage(best).total_energy();
    for (MHz f : emu.gpu().search_clocks()) {
      const Joules e = stage(f).total_energy();
      if (e < least) {
        least = e;
        best = f;
      }
    }
    const emulator::RunResult at_1050 = stage(MHz(1050));
    const emulator::RunResult at_1410 = stage(MHz(1410));
    const char* dir = d == workload::Direction::kForward ? "forward" : "backward";
    t.add_row({fmt::format("Llama-3.2-3B TP8 stage 0 {}: least-energy clock (900-1410 MHz)", dir),
               fmt::format("{:g} MHz", best.value()), "1065-1080 MHz (175B-class stages)"});
    t.add_row({fmt::format("  E(1050)/E(1410), T(1050)/T(1410)"),
               fmt::format("{:.3f}, {:.3f}", at_1050.total_energy() / at_1410.total_energy(),
                           at_1050.time / at_1410.time),
               "0.70-0.74, 1.23-1.27"});
  }
  return t.render();
}

struct FrontierSummary {
  double fastest_time = 0;
  double fastest_energy = 0;  // total
  double least_energy = 0;
  double least_energy_time = 0;
};

// Real: the artifact's 10-point frontiers (planner estimates from measured profiles).
std::map<std::string, FrontierSummary> artifact_frontiers(const std::string& path) {
  const auto table = CsvTable::read_file(path);
  std::map<std::string, FrontierSummary> out;
  for (std::size_t i = 0; i < table.rows(); ++i) {
    const auto row = table.row(i);
    auto& s = out[row.text("method")];
    const double t = row.number("iteration_time_s");
    const double e = row.number("total_energy_J_stage_sum");
    if (s.fastest_time == 0 || t < s.fastest_time) {
      s.fastest_time = t;
      s.fastest_energy = e;
    }
    if (s.least_energy == 0 || e < s.least_energy) {
      s.least_energy = e;
      s.least_energy_time = t;
    }
  }
  return out;
}

FrontierSummary summarise(const planner::MethodResult& m) {
  FrontierSummary s;
  s.fastest_time = m.fastest().time.value();
  s.fastest_energy = m.fastest().energy.value();
  for (const auto& p : m.frontier) {
    if (s.least_energy == 0 || p.energy.value() < s.least_energy) {
      s.least_energy = p.energy.value();
      s.least_energy_time = p.time.value();
    }
  }
  return s;
}

std::string frontier_table(const std::string& artifact) {
  const auto real = artifact_frontiers(artifact);
  workload::WorkloadRequest req;
  req.model = "llama3.2-3b";
  req.gpu = "a100-sxm4-40gb";
  req.parallelism = {8, 1, 2, 1, 8, 4096, 8, workload::Recompute::kFull, {}, 8};
  planner::PlanOptions o;
  o.methods = {Method::kPerseus, Method::kNanobatchPerseus, Method::kKareus};
  const auto plan = planner::plan(workload::make_workload(req), o);
  std::map<std::string, FrontierSummary> emulated{
      {"perseus", summarise(plan.methods.at(Method::kPerseus))},
      {"nanobatch_perseus", summarise(plan.methods.at(Method::kNanobatchPerseus))},
      {"kareus", summarise(plan.methods.at(Method::kKareus))}};
  TextTable t({"figure", "real (artifact)", "emulated", "difference"});
  const auto add = [&](const std::string& name, double r, double e) {
    t.add_row({name, fmt::format("{:.1f} %", 100 * r), fmt::format("{:.1f} %", 100 * e),
               fmt::format("{:+.1f} points", 100 * (e - r))});
  };
  for (const char* m : {"nanobatch_perseus", "kareus"}) {
    const auto time_gain = [&](const auto& f) {
      return 1 - f.at(m).fastest_time / f.at("perseus").fastest_time;
    };
    const auto energy_gain = [&](const auto& f) {
      return 1 - f.at(m).fastest_energy / f.at("perseus").fastest_energy;
    };
    const auto least_gain = [&](const auto& f) {
      return 1 - f.at(m).least_energy / f.at("perseus").least_energy;
    };
    add(fmt::format("{}: max-throughput time reduction vs Perseus", m), time_gain(real),
        time_gain(emulated));
    add(fmt::format("{}: energy at max throughput, reduction vs Perseus's", m), energy_gain(real),
        energy_gain(emulated));
    add(fmt::format("{}: least energy, reduction vs Perseus's", m), least_gain(real),
        least_gain(emulated));
  }
  const auto span = [](const FrontierSummary& s) {
    return s.least_energy_time / s.fastest_time - 1;
  };
  const auto depth = [](const FrontierSummary& s) { return 1 - s.least_energy / s.fastest_energy; };
  // The artifact's energies are one GPU of each stage summed; the emulator's are the job's.
  const double per_stage_gpu = 1.0 / (req.parallelism.tp * req.parallelism.cp);
  const auto& rp = real.at("perseus");
  const auto& ep = emulated.at("perseus");
  t.add_row({"perseus: fastest iteration time", fmt::format("{:.3f} s", rp.fastest_time),
             fmt::format("{:.3f} s", ep.fastest_time),
             fmt::format("{:+.1f} %", 100 * (ep.fastest_time / rp.fastest_time - 1))});
  t.add_row({"perseus: energy at the fastest point, one GPU per stage",
             fmt::format("{:.0f} J", rp.fastest_energy),
             fmt::format("{:.0f} J", ep.fastest_energy * per_stage_gpu),
             fmt::format("{:+.1f} %",
                         100 * (ep.fastest_energy * per_stage_gpu / rp.fastest_energy - 1))});
  add("perseus: time span (least-energy time / fastest time - 1)", span(real.at("perseus")),
      span(emulated.at("perseus")));
  add("perseus: energy depth (1 - least energy / energy at fastest)", depth(real.at("perseus")),
      depth(emulated.at("perseus")));
  return t.render();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Emulator fidelity against published measurements and the Kareus artifact"};
  std::string artifact =
      (data_dir().parent_path() / "tests/data/calibration/llama3.2_3b_tp8_mbs8_seq4096.csv")
          .string();
  app.add_option("--artifact", artifact, "The artifact's frontier CSV")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    const emulator::Emulator a100(load_gpu("a100-sxm4-40gb"));
    std::cout << "## Kernels on their own against public measurements\n\n"
              << kernel_table(data_dir() / "validation" / "kernel_figures.csv")
              << "\n## GEMM || 64 MiB AllReduce over 4 A100s at 1200 MHz\n\n"
              << pairs_table(a100) << "\n## Clock and energy (A100)\n\n"
              << clock_table(a100)
              << "\n## Llama-3.2-3B TP8 PP2 on 16 A100: artifact frontiers vs emulated plans\n\n"
              << frontier_table(artifact);
  } catch (const Error& e) {
    std::cerr << "bench_emulator_fidelity: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
