// SPDX-License-Identifier: Apache-2.0
// Minimum-energy choice of one option per step under a total-time budget: a multiple-choice
// knapsack solved exactly by dynamic programming over quantised time, optionally with a cost for
// every clock switch between consecutive steps. The steps are generic (kernels, phases, passes or
// Kareus partitions), so any caller with a sequence of (time, energy) options can use it.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kareus/core/units.hpp"

namespace kareus::frontier {

// One way to run a step. `clock` indexes the caller's clock table; switching costs are charged
// whenever consecutive steps run at different clock indices.
struct StepOption {
  std::size_t clock = 0;
  Seconds time;
  Joules energy;
};

struct Step {
  std::string name;
  std::vector<StepOption> options;
};

// Stall model of a clock switch: the stream waits latency[from][to] between the two steps while the
// GPU draws `power`, so each switch adds that latency to the total time and power x latency to the
// total energy. An empty matrix means ideal switching (free and instantaneous), as in the paper.
struct SwitchCost {
  std::vector<std::vector<Seconds>> latency;
  Watts power;

  bool ideal() const { return latency.empty(); }
  Seconds latency_of(std::size_t from, std::size_t to) const;
  Joules energy_of(std::size_t from, std::size_t to) const { return power * latency_of(from, to); }
};

// The same latency for every pair of distinct clocks.
SwitchCost uniform_switch_cost(std::size_t clocks, Seconds latency, Watts power);

struct SequenceBudget {
  Seconds time_budget;
  // Resolution of the DP: the slack (budget minus the sum of every step's fastest option) is cut
  // into this many quanta. Ignored when `quantum` is set.
  std::size_t time_bins = 4000;
  std::optional<Seconds> quantum;
  // Clock in force before the first step; a switch from it is charged. Unset: the first step's
  // clock is set before the sequence starts, free of charge.
  std::optional<std::size_t> initial_clock;
};

// Totals of a given choice, including its switches.
struct SequenceCost {
  Seconds time;
  Joules energy;
  std::size_t switches = 0;
  Seconds switch_time;
  Joules switch_energy;
};

struct SequencePlan {
  bool feasible = false;
  std::vector<std::size_t> choice;  // option index per step
  SequenceCost cost;
  Seconds quantum;
  // Each step's slack, and each switch's latency, is rounded up to whole quanta, so the plan never
  // exceeds the budget; the price is that no plan with true time <= budget - quantisation_loss
  // saves more energy than this one.
  Seconds quantisation_loss;
};

SequenceCost evaluate_choice(std::span<const Step> steps, std::span<const std::size_t> choice,
                             const SwitchCost& switching,
                             std::optional<std::size_t> initial_clock = std::nullopt);

SequencePlan plan_min_energy(std::span<const Step> steps, const SwitchCost& switching,
                             const SequenceBudget& options);

// A vertex of the lower convex hull of total energy against total time with free switching:
// the plan that minimises energy + lambda x time. Consecutive vertices differ in one step's option.
struct CurvePoint {
  Seconds time;
  Joules energy;
  // The lowest lambda (J/s) at which this plan is optimal; it stays optimal up to the previous
  // point's lambda. Zero for the last, lowest-energy point.
  Watts lambda;
};

// Lagrangian sweep over lambda from infinity (fastest plan) down to zero (lowest-energy plan).
std::vector<CurvePoint> lagrangian_curve(std::span<const Step> steps);

}  // namespace kareus::frontier
