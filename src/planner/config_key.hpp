// SPDX-License-Identifier: Apache-2.0
// The key that names a partition's configuration within an instruction, shared by the
// composition and the per-partition clock plan: the partition's own key, or kRecomputePrefix and
// that key for a forward partition that a full-recompute backward instruction runs again.
#pragma once

#include <string>
#include <string_view>

#include "kareus/partition/partition.hpp"

namespace kareus::planner::config_key {

inline constexpr std::string_view kRecomputePrefix = "recompute:";

// A partition with a configuration to choose: it overlaps a collective and is not fixed.
inline bool searchable(const partition::Partition& p) {
  return p.comm.has_value() && !p.fixed;
}

// The partition's key within a configuration key.
inline std::string base_key(const std::string& config_key) {
  return config_key.starts_with(kRecomputePrefix) ? config_key.substr(kRecomputePrefix.size())
                                                  : config_key;
}

}  // namespace kareus::planner::config_key
