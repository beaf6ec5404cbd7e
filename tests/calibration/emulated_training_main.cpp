// SPDX-License-Identifier: Apache-2.0
// kareus-emulated-training: a stand-in training job for machines without a GPU (emulated_job.hpp).
// It plays a schedule through the runtime on the fake NVML, the instructions running on the
// emulator with the GPU file given as the "real" GPU, and writes the measurement records a real
// job would. The tests and the worked example of docs/calibration.md use it.
#include <fmt/format.h>

#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "emulated_job.hpp"
#include "kareus/core/error.hpp"
#include "kareus/hardware/gpu_file.hpp"

int main(int argc, char** argv) {
  using namespace kareus;
  CLI::App app{"A stand-in training job: a schedule played on the emulator through the fake NVML"};
  std::string schedule, gpu, record;
  testing::EmulatedJob job;
  std::vector<double> slowdowns, power_limits;
  std::vector<std::string> settings;
  app.add_option("--schedule", schedule, "Schedule JSON (kareus plan)")->required();
  app.add_option("--gpu", gpu, "The GPU the job runs on: a GPU file or catalogue name")->required();
  app.add_option("--record", record, "Measurement record to write ({rank} per rank)")->required();
  app.add_option("--iterations", job.iterations, "Training iterations")->capture_default_str();
  app.add_option("--noise", job.noise_sigma, "Relative noise of each reading")
      ->capture_default_str();
  app.add_option("--seed", job.seed, "Noise seed")->capture_default_str();
  app.add_option("--slowdown", slowdowns, "Per stage: how much slower its rank runs (stragglers)");
  app.add_option("--power-limit", power_limits, "Per stage: its GPU's power limit, W");
  app.add_option("--set", settings, "KEY=VALUE: a constant of the GPU file changed (repeatable)");
  CLI11_PARSE(app, argc, argv);
  try {
    job.schedule = load_schedule(schedule);
    std::map<std::string, double> values;
    for (const auto& s : settings) {
      const auto eq = s.find('=');
      if (eq == std::string::npos) throw Error::invalid("command line", "--set", s, "KEY=VALUE");
      values[s.substr(0, eq)] = std::stod(s.substr(eq + 1));
    }
    job.truth = read_gpu_file(gpu).with_values(values).spec();
    job.record = record;
    const int stages = static_cast<int>(job.schedule.stages.size());
    for (int st = 0; st < stages; ++st)
      job.ranks.push_back({st, st, static_cast<unsigned>(st),
                           st < static_cast<int>(slowdowns.size()) ? slowdowns[st] : 1.0});
    // Its own fake NVML: one emulated-time device per stage.
    const auto dir = std::filesystem::temp_directory_path() /
                     fmt::format("kareus-emulated-training-{}", ::getpid());
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "nvml.json")
        << testing::emulated_nvml_script(job.truth, stages, power_limits);
    setenv("KAREUS_FAKE_NVML_SCRIPT", (dir / "nvml.json").c_str(), 1);
    // Always the fake: the stand-in must never touch a real GPU's clocks.
    setenv("KAREUS_NVML_LIBRARY", KAREUS_FAKE_NVML_PATH, 1);
    const auto files = testing::play(job);
    std::filesystem::remove_all(dir);
    for (const auto& f : files) std::cout << "wrote " << f.string() << "\n";
  } catch (const Error& e) {
    std::cerr << "kareus-emulated-training: " << e.what() << "\n";
    return exit_code(e.kind());
  }
  return 0;
}
