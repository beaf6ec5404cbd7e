// SPDX-License-Identifier: Apache-2.0
// A stand-in for a training job on machines without a GPU: it plays a schedule through the real
// runtime (frequency controller, NVML clock backend, measurement record) on the fake NVML, and
// each instruction "runs" on the emulator with a GPU file of its own (the real GPU's constants,
// which calibration has to find). The fake NVML's emulated-time devices take the emulator's time,
// energy and clock of every instruction, of the pipeline waits (at blocked power) and of the work
// after the last instruction (gradient reduction, optimizer), so the record is written exactly as
// on a GPU. It does not model a slow rank holding up its peers' collectives: each rank runs its
// own instructions at its own pace and they meet at the iteration's end.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "kareus/hardware/gpu_spec.hpp"
#include "kareus/schedule/schedule.hpp"

namespace kareus::testing {

struct PlayedRank {
  int rank = 0;
  int stage = 0;
  unsigned gpu = 0;       // NVML index on the fake NVML (an emulated-time device)
  double slowdown = 1.0;  // > 1: a straggler, its instructions take this much longer
};

struct EmulatedJob {
  Schedule schedule;
  GpuSpec truth;  // the GPU the job "runs" on
  int iterations = 3;
  double noise_sigma = 0.0;  // relative, per instruction reading (Emulator::measure)
  std::uint64_t seed = 1;
  std::filesystem::path record;  // "{rank}" replaced per rank; empty: no record
  // Empty: one rank per stage, rank = stage = NVML index.
  std::vector<PlayedRank> ranks;
};

// Plays the job; returns the record files written. Needs KAREUS_NVML_LIBRARY to be the fake
// NVML with emulated-time devices (tests/nvml/fake_nvml/README.md).
std::vector<std::filesystem::path> play(const EmulatedJob& job);

// A fake NVML script with `count` emulated-time devices named as `truth` (NVML's spelling), each
// with the supported clocks of `truth` and its default power limit, or `power_limits` (W) per
// device where given.
std::string emulated_nvml_script(const GpuSpec& truth, int count,
                                 const std::vector<double>& power_limits = {});

}  // namespace kareus::testing
