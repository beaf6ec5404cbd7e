// SPDX-License-Identifier: Apache-2.0
// Partitioned overlap execution (Kareus §4.1): a microbatch is split into two
// nanobatches; each partition runs one nanobatch's compute segment while the other
// nanobatch's previous collective runs beside it, with no data dependency between them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kareus/workload/kernels.hpp"

namespace kareus::partition {

// A semantic launch point: the collective is launched just before compute op `op_index`.
struct LaunchSlot {
  std::string name;  // norm_0, linear_0, rope_0, attn_0, activation_0, ...
  int op_index = 0;
};

struct Partition {
  std::string key;  // fwd_attn, bwd_mlp, fwd_qkv_ag, ..., "fwd_trail", or "" (nothing overlapped)
  int nanobatch = 0;
  std::vector<workload::Kernel> compute;   // this nanobatch's compute segment
  std::optional<workload::Kernel> comm;    // the other nanobatch's collective
  std::vector<LaunchSlot> slots;           // every semantic slot of the compute segment
  std::vector<LaunchSlot> launch_options;  // the slots the search may choose
  bool fixed = false;                      // trail partitions run a fixed configuration

  const LaunchSlot* find_slot(const std::string& name) const;
};

// The partitions of `layers` consecutive transformer layers in one direction, in execution
// order: 4L+2 without CP, 6L+2 forward / 8L+2 backward with CP. Throws kareus::Error when the
// microbatch cannot be split into two nanobatches.
std::vector<Partition> build_partitions(const workload::Workload& w, workload::Direction d,
                                        int layers);

// One representative partition per key (a middle-layer one, with its collective), in the
// order the keys first appear. Trail and comm-less partitions are excluded.
std::vector<Partition> representative_partitions(const workload::Workload& w);

// Every partition key of the workload's layout, forward then backward.
std::vector<std::string> partition_keys(const workload::Workload& w);

// The configuration trail partitions run with (the artifact runs norm_0 on 20 SMs).
inline constexpr int kTrailSms = 20;

// Throws kareus::Error naming the requirement when the microbatch size is odd.
void require_nanobatch_split(const workload::Workload& w, const std::string& where);

}  // namespace kareus::partition
