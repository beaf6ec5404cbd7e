// SPDX-License-Identifier: Apache-2.0
// Small random DVFS instances and an exhaustive solver to check the DP against.
#pragma once

#include <limits>
#include <vector>

#include "kareus/core/rng.hpp"
#include "kareus/frontier/step_sequence.hpp"

namespace kareus::frontier::testing {

// `integer_ms`: times and latencies are whole milliseconds, so a 1 ms quantum is exact.
inline std::vector<Step> random_steps(Rng& rng, std::size_t steps, std::size_t clocks,
                                      bool integer_ms) {
  std::vector<Step> out;
  for (std::size_t i = 0; i < steps; ++i) {
    Step step;
    step.name = "k" + std::to_string(i);
    for (std::size_t c = 0; c < clocks; ++c) {
      const double ms = integer_ms ? static_cast<double>(rng.integer(1, 12)) : rng.uniform(0.5, 12);
      step.options.push_back({c, milliseconds(ms), Joules(rng.uniform(0.1, 3.0))});
    }
    out.push_back(std::move(step));
  }
  return out;
}

inline SwitchCost random_switch_cost(Rng& rng, std::size_t clocks, bool integer_ms) {
  SwitchCost cost;
  cost.power = Watts(rng.uniform(20, 120));
  cost.latency.assign(clocks, std::vector<Seconds>(clocks, Seconds(0)));
  for (std::size_t a = 0; a < clocks; ++a)
    for (std::size_t b = 0; b < clocks; ++b)
      if (a != b)
        cost.latency[a][b] =
            milliseconds(integer_ms ? static_cast<double>(rng.integer(0, 4)) : rng.uniform(0, 4));
  return cost;
}

struct BruteForce {
  bool feasible = false;
  double energy = std::numeric_limits<double>::infinity();
};

inline BruteForce brute_force(const std::vector<Step>& steps, const SwitchCost& switching,
                              Seconds budget) {
  BruteForce best;
  std::vector<std::size_t> choice(steps.size(), 0);
  while (true) {
    const SequenceCost cost = evaluate_choice(steps, choice, switching);
    if (cost.time <= budget && cost.energy.value() < best.energy) {
      best.feasible = true;
      best.energy = cost.energy.value();
    }
    std::size_t i = 0;
    while (i < steps.size() && ++choice[i] == steps[i].options.size()) choice[i++] = 0;
    if (i == steps.size()) return best;
  }
}

inline Seconds fastest_total(const std::vector<Step>& steps) {
  Seconds total{0};
  for (const auto& s : steps) {
    Seconds t = s.options.front().time;
    for (const auto& o : s.options) t = std::min(t, o.time);
    total += t;
  }
  return total;
}

}  // namespace kareus::frontier::testing
