// SPDX-License-Identifier: Apache-2.0
// The real-GPU check behind kareus-gpu-check: measures the configurations of plan_gpu_check on
// the CUDA executor (or, in a dry run, only lists them) beside the emulator's figures.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kareus/core/json.hpp"
#include "kareus/executor/executor.hpp"
#include "kareus/executor/gpu_check.hpp"

namespace kareus::gpu_check {

struct CheckRequest {
  workload::Workload workload;
  executor::GpuCheckOptions options;
  executor::MeasurementProtocol protocol;
  int device = 0;
  bool dry_run = false;
  // Dry run only: the clock to list configurations at (0: the GPU's maximum clock).
  MHz clock{0.0};
  // Emulated values closer than this (relative) are ties within measurement noise.
  double tie_tolerance = 0.02;
};

struct CheckRow {
  std::string partition;
  partition::ExecConfig config;
  executor::Measurement emulated;
  std::optional<executor::Measurement> measured;
  std::optional<MHz> observed_clock;  // NVML, in the middle of the window
};

struct KeyAgreement {
  std::string partition;
  executor::RankAgreement time;
  executor::RankAgreement energy;
};

struct CheckResult {
  bool dry_run = false;
  std::string device;  // CUDA device name, or "none (dry run)"
  MHz clock;
  std::string clock_note;
  std::vector<CheckRow> rows;
  std::vector<KeyAgreement> keys;  // empty in a dry run
  Seconds emulated_gpu_time;       // what the protocol would take on the GPU
  bool same_ranking() const;
};

// Never changes a clock, power limit or any other GPU setting. Throws kareus::Error on bad input
// or when no CUDA device or NVML is available for a measured run.
CheckResult run_check(const CheckRequest& request);

std::string format_text(const CheckRequest& request, const CheckResult& result);
Json to_json(const CheckRequest& request, const CheckResult& result);

}  // namespace kareus::gpu_check
