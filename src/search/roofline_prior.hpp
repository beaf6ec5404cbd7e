// SPDX-License-Identifier: Apache-2.0
// A measurement-free prior of a partition configuration's time and energy, from datasheet figures
// only (peak BF16 throughput, HBM bandwidth, collective bus-bandwidth ceiling, NCCL's default
// channel count), so a user of a real GPU has it before measuring anything. It is deliberately
// not the calibrated emulator: no efficiencies, SM-scaling curves or contention model. The
// `kareus` strategy's surrogates take these figures as features; the trees learn the rest.
#pragma once

#include <vector>

#include "kareus/hardware/gpu_spec.hpp"
#include "kareus/partition/config_space.hpp"

namespace kareus::search {

struct RooflineFigures {
  double compute_s = 0;            // the compute segment on the SMs the collective leaves
  double launch_offset_s = 0;      // compute before the launch slot
  double comm_s = 0;               // the collective alone on its SMs
  double partition_s = 0;          // max(compute, offset + comm)
  double exposed_comm_s = 0;       // partition - compute
  double overlapped_memory_s = 0;  // memory-bound compute inside the collective's window
  double dynamic_proxy = 0;        // (f / f_max)^3 x busy SM-seconds, the paper's P ~ f^3 model
};

RooflineFigures roofline(const partition::Partition& p, const partition::ExecConfig& config,
                         const GpuSpec& gpu);

// The figures as a feature row: clock, comm SMs, launch op index, then the fields above.
std::vector<double> roofline_features(const partition::Partition& p,
                                      const partition::ExecConfig& config, const GpuSpec& gpu);

}  // namespace kareus::search
