// partitions.json in a plan directory: every configuration the partition search measured per key
// for the chosen method, so that a report can show the partition frontier each choice came from.
#pragma once

#include "kareus/core/json.hpp"
#include "kareus/planner/planner.hpp"

namespace kareus::report {

// {"method": "kareus", "keys": {"fwd_attn": [{"clock_mhz": 1410, "slot": "norm_0", "sms": 12,
//   "time_s": ..., "dynamic_energy_j": ..., "frontier": true}, ...]}}; per GPU, one partition
// run; `frontier`: on the key's (time, dynamic energy) Pareto set. No keys for methods that
// search nothing.
Json partitions_json(const planner::MethodResult& method);

}  // namespace kareus::report
