// SPDX-License-Identifier: Apache-2.0
// kareus kernel-dvfs: one clock per kernel under a slowdown bound, ideal (as Spaan et al.) and with
// clock-switch costs, against max-clock, governor and one-clock-per-pass baselines.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "common_flags.hpp"
#include "deprecated_alias.hpp"
#include "flag_checks.hpp"
#include "kareus/core/error.hpp"
#include "kareus/core/limits.hpp"
#include "kareus/hardware/gpu_spec.hpp"
#include "kareus/kernel_dvfs/emulated.hpp"
#include "kareus/kernel_dvfs/profile_csv.hpp"
#include "kareus/kernel_dvfs/study.hpp"
#include "kareus/kernel_dvfs/switching.hpp"
#include "workload_flags.hpp"

namespace kareus::cli {
namespace {

using namespace kareus::kernel_dvfs;

struct KernelDvfsFlags {
  std::string profile;
  std::string trace;
  double trace_clock_mhz = 0;
  WorkloadFlags workload;
  int layers = 1;
  std::vector<std::string> slowdowns{"0.6%"};
  std::string reference = "max-clock";
  double power_limit_w = 0;
  bool ideal = false;
  double switch_latency_ms = -1;
  std::string switch_latency_csv;
  double switch_power_w = -1;
  double min_dwell_ms = 0;
  std::size_t time_bins = 4000;
  bool plan = false;
  bool curve = false;
  bool json = false;
};

// "0.6%" is a percentage, a bare number a fraction (0.006).
double parse_slowdown(const std::string& text) {
  const bool percent = !text.empty() && text.back() == '%';
  const std::string number = percent ? text.substr(0, text.size() - 1) : text;
  char* end = nullptr;
  const double v = std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() || !std::isfinite(v) || v < 0)
    throw Error::invalid("", "--slowdown", text,
                         "expected a percentage like 0.6% or a fraction like 0.006, >= 0");
  return percent ? v / 100.0 : v;
}

// Without a GPU spec, the stall power is taken as the lowest average power of any kernel at any
// clock: the GPU stays resident and clocked while the stream waits, so it draws at least its
// static power and at most what its lightest kernel draws.
Watts lowest_kernel_power(const KernelSequence& seq) {
  Watts lowest = seq.kernels.front().energy.front() / seq.kernels.front().time.front();
  for (const auto& k : seq.kernels)
    for (std::size_t c = 0; c < seq.clocks.size(); ++c)
      lowest = std::min(lowest, k.energy[c] / k.time[c]);
  return lowest;
}

struct Input {
  KernelSequence sequence;
  std::optional<GpuSpec> gpu;
};

// Exactly one of: a measured profile (optionally checked against --gpu's clock table), a
// profiler trace scaled on the emulated --gpu, or the workload model on the emulator.
Input read_input(const KernelDvfsFlags& flags, bool gpu_given) {
  const bool model = !flags.workload.model.empty() || !flags.workload.workload_files.empty();
  const int inputs = !flags.profile.empty() + !flags.trace.empty() + model;
  if (inputs != 1)
    throw Error(
        "kernel-dvfs: give exactly one input: --kernel-profile FILE.csv, --trace FILE.json "
        "--trace-clock F --gpu NAME, or --model NAME --gpu NAME [--layers N]");
  Input in;
  if (!flags.profile.empty()) {
    if (gpu_given) in.gpu = load_gpu(flags.workload.gpu);
    std::optional<std::vector<MHz>> allowed;
    if (in.gpu) allowed = in.gpu->supported_clocks();
    in.sequence = load_profile_csv(flags.profile, allowed);
  } else if (!flags.trace.empty()) {
    if (!gpu_given) throw Error("kernel-dvfs: --trace needs --gpu, the GPU the trace ran on");
    if (flags.trace_clock_mhz <= 0)
      throw Error("kernel-dvfs: --trace needs --trace-clock, the clock it was recorded at");
    in.gpu = load_gpu(flags.workload.gpu);
    in.sequence = scale_trace(load_torch_trace(flags.trace), MHz(flags.trace_clock_mhz), *in.gpu,
                              planning_clocks(*in.gpu));
  } else {
    const auto w = flags.workload.resolve();
    in.gpu = w.gpu;
    in.sequence = emulate_layers(w, flags.layers, planning_clocks(w.gpu));
  }
  return in;
}

void configure_switching(const KernelDvfsFlags& flags, const Input& in, StudyOptions& options) {
  if (flags.ideal) return;
  const KernelSequence& seq = in.sequence;
  Watts power;
  std::string power_source;
  if (flags.switch_power_w >= 0) {
    power = Watts(flags.switch_power_w);
    power_source = "--switch-power-w";
  } else if (in.gpu) {
    power = in.gpu->static_power;
    power_source = "static power of " + in.gpu->name + ", data/gpus";
  } else {
    power = lowest_kernel_power(seq);
    power_source = "lowest kernel power in the profile";
  }
  if (!flags.switch_latency_csv.empty()) {
    options.switching = load_switch_latency_csv(flags.switch_latency_csv, seq.clocks, power);
    options.switching_source = "L(from, to) from " + flags.switch_latency_csv;
  } else {
    const bool given = flags.switch_latency_ms >= 0;
    const Seconds latency = given ? milliseconds(flags.switch_latency_ms) : kDefaultSwitchLatency;
    options.switching = frontier::uniform_switch_cost(seq.clocks.size(), latency, power);
    options.switching_source =
        given ? fmt::format("L = {} ms (--switch-latency-ms)", flags.switch_latency_ms)
              : fmt::format(
                    "L = {} ms (p50 of a public NVML locked-clock test; published range "
                    "1-500 ms, Velicka et al. IPDPSW 2025)",
                    to_milliseconds(kDefaultSwitchLatency));
  }
  options.switching_source +=
      fmt::format(", stall power {:.1f} W ({})", power.value(), power_source);
}

void run(const KernelDvfsFlags& flags, bool gpu_given) {
  if (!flags.switch_latency_csv.empty() && flags.switch_latency_ms >= 0)
    throw Error("kernel-dvfs: give either --switch-latency-ms or --switch-latency-csv, not both");
  if (flags.ideal && (!flags.switch_latency_csv.empty() || flags.switch_latency_ms >= 0))
    throw Error("kernel-dvfs: --ideal ignores switching; drop --switch-latency-*");
  const Input in = read_input(flags, gpu_given);
  const KernelSequence& seq = in.sequence;

  StudyOptions options;
  options.slowdowns.clear();
  for (const auto& s : flags.slowdowns) options.slowdowns.push_back(parse_slowdown(s));
  if (flags.reference == "governor")
    options.reference = Reference::kGovernor;
  else if (flags.reference != "max-clock")
    throw Error::invalid("", "--reference", flags.reference, "expected max-clock or governor");
  if (flags.power_limit_w > 0)
    options.power_limit = Watts(flags.power_limit_w);
  else if (in.gpu)
    options.power_limit = in.gpu->power_limit_default;
  options.ideal = flags.ideal;
  options.min_dwell = milliseconds(flags.min_dwell_ms);
  options.time_bins = flags.time_bins;
  options.curve = flags.curve;
  configure_switching(flags, in, options);

  StudyResult result = run_study(seq, options);
  if (!result.governor)
    result.notes.insert(
        result.notes.begin(),
        "default-governor baseline omitted: it needs the GPU's power limit (--power-limit-w)");
  const std::string out = flags.json ? study_json(seq, options, result, flags.plan).dump(2) + "\n"
                                     : study_text(seq, options, result, flags.plan);
  std::cout << out;
}

}  // namespace

void register_kernel_dvfs_command(CLI::App& app) {
  auto flags = std::make_shared<KernelDvfsFlags>();
  auto* cmd = app.add_subcommand(
      "kernel-dvfs",
      "Choose the GPU clock per kernel to minimise energy under a slowdown bound "
      "(docs/kernel-dvfs.md)");
  auto* profile =
      cmd->add_option("--kernel-profile", flags->profile,
                      "Measured per-kernel CSV: kernel,clock_mhz,time_s,energy_j[,pass]");
  profile->check(CLI::ExistingFile);
  add_deprecated_alias(cmd, profile, "--profile", flags->profile)->check(CLI::ExistingFile);
  cmd->add_option("--trace", flags->trace,
                  "torch.profiler Chrome trace JSON, recorded at --trace-clock on --gpu")
      ->check(CLI::ExistingFile);
  auto* trace_clock =
      cmd->add_option("--trace-clock", flags->trace_clock_mhz, "SM clock (MHz) the trace ran at");
  trace_clock->check(positive_number_at_most(static_cast<double>(kMaxClockMhz)));
  add_deprecated_alias(cmd, trace_clock, "--trace-clock-mhz", flags->trace_clock_mhz)
      ->check(positive_number_at_most(static_cast<double>(kMaxClockMhz)));
  flags->workload.add_to(*cmd);
  // The study emulates --layers layers on one GPU, not the model's training.
  flags->workload.training_job = false;
  // The study's work grows with kernels x time bins; 1024 layers is several times the deepest
  // model in data/models, and far beyond any, yet still finishes.
  cmd->add_option("--layers", flags->layers, "Transformer layers for --model (forward + backward)")
      ->check(integer_in(1, 1024))
      ->capture_default_str();
  cmd->add_option("--slowdown", flags->slowdowns,
                  "Slowdown bound(s) vs the reference time: 0.6% or 0.006 (several allowed)")
      ->capture_default_str();
  cmd->add_option("--reference", flags->reference, "Reference time: max-clock or governor")
      ->capture_default_str();
  cmd->add_option(
         "--power-limit-w", flags->power_limit_w,
         "GPU power limit for the default-governor baseline (default: the GPU's, when known)")
      ->check(positive_number_at_most(kMaxPowerWatts));
  cmd->add_flag("--ideal", flags->ideal,
                "Ignore clock-switch latency and energy, as the paper does");
  cmd->add_option("--switch-latency-ms", flags->switch_latency_ms,
                  "Latency of every clock switch (default 25 ms)")
      ->check(non_negative_number_at_most(kMaxWaitMilliseconds));
  cmd->add_option("--switch-latency-csv", flags->switch_latency_csv,
                  "Measured L(from, to): from_mhz,to_mhz,latency_ms")
      ->check(CLI::ExistingFile);
  cmd->add_option("--switch-power-w", flags->switch_power_w,
                  "Power drawn while a switch stalls the stream (default: the GPU's static power, "
                  "else the lowest kernel power)")
      ->check(non_negative_number_at_most(kMaxPowerWatts));
  cmd->add_option("--min-dwell-ms", flags->min_dwell_ms,
                  "Group consecutive kernels into phases lasting at least this long")
      ->check(non_negative_number_at_most(kMaxWaitMilliseconds));
  cmd->add_option("--time-bins", flags->time_bins, "DP resolution: quanta of the time slack")
      ->check(integer_in(1, 1000000))
      ->capture_default_str();
  cmd->add_flag("--plan", flags->plan, "Print the clock of every kernel");
  cmd->add_flag("--curve", flags->curve, "Print the energy-time curve (Lagrangian sweep)");
  add_json_flag(*cmd, flags->json, "One JSON document on stdout");
  cmd->callback([flags, cmd] { run(*flags, cmd->count("--gpu") > 0); });
}

}  // namespace kareus::cli
