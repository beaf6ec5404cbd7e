// SPDX-License-Identifier: Apache-2.0
// The real-GPU check (docs/validation.md): every partition key of a small workload, run for a
// few SM counts and launch slots at one clock on a GPU and on the emulator, and whether both
// rank each key's configurations the same way. The plan and the comparison are plain C++ so
// that a dry run works without a GPU.
#pragma once

#include <cstddef>
#include <vector>

#include "kareus/core/units.hpp"
#include "kareus/partition/config_space.hpp"
#include "kareus/workload/workload.hpp"

namespace kareus::executor {

struct GpuCheckOptions {
  // SM counts of the collective; empty: the smallest, middle and largest of the partition's
  // search range (partition::comm_sm_counts).
  std::vector<int> comm_sms;
  // Launch slots per key, the partition's first ones; 0: all of them.
  std::size_t slots_per_key = 0;
};

struct GpuCheckCase {
  partition::Partition partition;  // the key's representative partition
  std::vector<partition::ExecConfig> configs;
};

// One case per partition key of `w` (representative_partitions), every configuration at
// `clock`. Throws kareus::Error for a workload without searchable partitions (no collective to
// overlap, e.g. TP = CP = 1) or an SM count below 1.
std::vector<GpuCheckCase> plan_gpu_check(const workload::Workload& w, MHz clock,
                                         const GpuCheckOptions& options);

// How far a measurement orders configurations as a reference does: over the pairs the
// reference separates by more than `tolerance` (relative to the larger value; closer pairs are
// ties within measurement noise), the pairs the measurement orders the same way.
struct RankAgreement {
  int pairs = 0;
  int agreeing = 0;
  bool same() const { return agreeing == pairs; }
};
// Throws kareus::Error when the two vectors differ in length.
RankAgreement rank_agreement(const std::vector<double>& reference,
                             const std::vector<double>& measured, double tolerance);

}  // namespace kareus::executor
