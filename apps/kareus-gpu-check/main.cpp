// SPDX-License-Identifier: Apache-2.0
// kareus-gpu-check: the CUDA executor against the emulator on a machine with an NVIDIA GPU
// (docs/validation.md). Runs at the GPU's current clock and never changes a GPU setting.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <iostream>

#include "../kareus/field_spelling.hpp"
#include "../kareus/workload_flags.hpp"
#include "check.hpp"
#include "kareus/core/error.hpp"

namespace {

struct Flags {
  kareus::cli::WorkloadFlags workload;
  std::vector<int> comm_sms;
  std::size_t slots_per_key = 0;
  int device = 0;
  bool dry_run = false;
  bool json = false;
  double clock_mhz = 0;
  double window_s = 5.0;
  double cooldown_s = 5.0;
  double tie_tolerance = 0.02;
};

int run(const Flags& f) {
  kareus::gpu_check::CheckRequest request{f.workload.resolve(), {}, {}};
  request.options.comm_sms = f.comm_sms;
  request.options.slots_per_key = f.slots_per_key;
  request.protocol.window = kareus::Seconds(f.window_s);
  request.protocol.cooldown = kareus::Seconds(f.cooldown_s);
  request.device = f.device;
  request.dry_run = f.dry_run;
  request.clock = kareus::MHz(f.clock_mhz);
  kareus::require(f.tie_tolerance >= 0 && f.tie_tolerance < 1, "command line", "--tie-tolerance",
                  kareus::format_number(f.tie_tolerance), "must be in [0, 1)");
  kareus::require(f.clock_mhz == 0 || f.dry_run, "command line", "--clock-mhz",
                  kareus::format_number(f.clock_mhz),
                  "only with --dry-run: a measured run uses the GPU's current clock");
  const auto result = kareus::gpu_check::run_check(request);
  // Built whole before printing, so an error never leaves partial output.
  const std::string out = f.json ? kareus::gpu_check::to_json(request, result).dump(2) + "\n"
                                 : kareus::gpu_check::format_text(request, result);
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Runs every partition key of a small workload on this machine's GPU with the CUDA executor "
      "and on the emulator, at the GPU's current clock, and compares time, energy and the "
      "ranking of configurations. Never changes clocks, power limits or other GPU settings."};
  Flags f;
  f.workload.add_to(app);
  app.add_option("--sms", f.comm_sms,
                 "SM counts of the communication kernel (default: smallest, middle and largest "
                 "of each partition's search range)")
      ->delimiter(',');
  app.add_option("--slots-per-key", f.slots_per_key,
                 "Launch slots per partition key, the first ones (0 = all)")
      ->capture_default_str();
  app.add_option("--device", f.device, "CUDA device ordinal (= NVML index)")->capture_default_str();
  app.add_flag("--dry-run", f.dry_run,
               "List the configurations with emulated figures; touch no GPU");
  app.add_option("--clock-mhz", f.clock_mhz,
                 "Dry run only: clock to list configurations at (default: the GPU's maximum)");
  app.add_option("--window-s", f.window_s, "Measurement window per configuration (seconds)")
      ->capture_default_str();
  app.add_option("--cooldown-s", f.cooldown_s, "Idle time before each window (seconds)")
      ->capture_default_str();
  app.add_option("--tie-tolerance", f.tie_tolerance,
                 "Emulated values closer than this fraction count as ties when ranking")
      ->capture_default_str();
  app.add_flag("--json", f.json, "Print one JSON document on stdout");
  try {
    app.parse(argc, argv);
    return run(f);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "kareus-gpu-check: %s\n", e.what());
    return 2;
  } catch (const kareus::Error& e) {
    std::fprintf(stderr, "kareus-gpu-check: %s\n",
                 e.message(kareus::cli::field_speller(app)).c_str());
    return kareus::exit_code(e.kind());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kareus-gpu-check: internal error: %s\n", e.what());
    return 3;
  }
}
