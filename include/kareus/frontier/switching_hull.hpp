// SPDX-License-Identifier: Apache-2.0
// The lower convex hull of (time, energy) over every choice of one option per step of a sequence
// when each change of clock between consecutive steps costs a stall: what a sequence of steps can
// trade between time and energy once clock switches are paid for. The planner uses it for
// partition-granularity clocks (one clock per step of an instruction).
#pragma once

#include <cstddef>
#include <vector>

#include "kareus/frontier/step_sequence.hpp"

namespace kareus::frontier {

// The vertices of the lower convex hull of (time, energy) over all choices of one option per
// step, switches included, with the choice of each: exact, by a Lagrangian sweep
// (Eisner-Severance) over a Viterbi DP. `switching` must charge every pair of distinct clocks
// alike (uniform_switch_cost), which keeps each DP pass O(steps x clocks).
struct HullPlan {
  std::vector<std::size_t> choice;
  SequenceCost cost;
};
std::vector<HullPlan> switching_hull(const std::vector<Step>& steps, std::size_t clocks,
                                     const SwitchCost& switching);

}  // namespace kareus::frontier
