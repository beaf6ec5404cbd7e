// SPDX-License-Identifier: Apache-2.0
// A plan run's files, as the plan directory holds them (plan_files.hpp): frontier_<method>.csv per
// method, schedule.json, summary.json and partitions.json.
#pragma once

#include "kareus/core/json.hpp"
#include "kareus/plan_dir/plan_files.hpp"
#include "kareus/planner/run.hpp"

namespace kareus::plan_dir {

// Every file of `outcome`'s plan directory, to go to `dir`.
PlanFiles plan_files(const planner::PlanOutcome& outcome, const std::filesystem::path& dir = {});

// partitions.json: {"method": "kareus", "keys": {"fwd_attn": [{"clock_mhz": 1410, "slot":
// "norm_0", "sms": 12, "time_s": ..., "dynamic_energy_j": ..., "samples": ..., "frontier":
// true}, ...]}, "confidence": {...}}; every configuration the method's partition searches
// measured, per GPU one partition run; `frontier`: on the key's (time, dynamic energy) Pareto set.
// No keys for methods that search nothing.
Json partitions_json(const planner::MethodResult& method);

}  // namespace kareus::plan_dir
