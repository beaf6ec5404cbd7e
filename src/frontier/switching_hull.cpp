// SPDX-License-Identifier: Apache-2.0
#include "kareus/frontier/switching_hull.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "kareus/core/error.hpp"

namespace kareus::frontier {
namespace {

// A lambda this large makes any time difference outweigh every energy difference, so the plan
// it selects is the fastest (and, among equally fast ones, the cheapest).
constexpr double kFastestLambda = 1e9;
// Relative margin by which a new plan must beat the hull segment to count as a vertex, so that
// floating-point ties do not recurse.
constexpr double kVertexMargin = 1e-12;
// Guards the sweep against pathological inputs; real instructions have tens of vertices.
constexpr std::size_t kMaxVertices = 4096;

// Viterbi over the clock in force: the choice minimising energy + lambda x time including
// switches. Every pair of distinct clocks costs the same, so arriving at a clock costs the
// cheaper of staying and switching from the best clock: O(steps x clocks).
std::vector<std::size_t> best_choice(const std::vector<Step>& steps, std::size_t clocks,
                                     double lambda, const SwitchCost& switching) {
  const double switch_cost =
      clocks < 2 ? 0.0
                 : switching.energy_of(0, 1).value() + lambda * switching.latency_of(0, 1).value();
  std::vector<double> value(clocks, 0.0), next(clocks);
  std::vector<std::vector<std::size_t>> option_at(steps.size(),
                                                  std::vector<std::size_t>(clocks, SIZE_MAX));
  // came_from[i][k]: clock in force before step i when step i runs at clock k.
  std::vector<std::vector<std::size_t>> came_from(steps.size(), std::vector<std::size_t>(clocks));
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const std::size_t best =
        std::min_element(value.begin(), value.end()) - value.begin();  // ties: lowest index
    std::fill(next.begin(), next.end(), std::numeric_limits<double>::infinity());
    for (std::size_t o = 0; o < steps[i].options.size(); ++o) {
      const auto& opt = steps[i].options[o];
      const std::size_t k = opt.clock;
      // The first step's clock is set before the instruction starts, free of charge.
      const bool stay = i == 0 || value[k] <= value[best] + switch_cost;
      const double arrive = stay ? value[k] : value[best] + switch_cost;
      next[k] = arrive + opt.energy.value() + lambda * opt.time.value();
      option_at[i][k] = o;
      came_from[i][k] = stay ? k : best;
    }
    value.swap(next);
  }
  std::vector<std::size_t> choice(steps.size());
  std::size_t k = std::min_element(value.begin(), value.end()) - value.begin();
  for (std::size_t i = steps.size(); i-- > 0;) {
    choice[i] = option_at[i][k];
    k = came_from[i][k];
  }
  return choice;
}

double value_of(const HullPlan& p, double lambda) {
  return p.cost.energy.value() + lambda * p.cost.time.value();
}

HullPlan solve(const std::vector<Step>& steps, std::size_t clocks, double lambda,
               const SwitchCost& switching) {
  HullPlan p{best_choice(steps, clocks, lambda, switching), {}};
  p.cost = evaluate_choice(steps, p.choice, switching);
  return p;
}

// Eisner-Severance: between two hull vertices, the lambda at which they tie either yields a plan
// strictly below their segment (a new vertex between them) or proves them adjacent.
void sweep(const std::vector<Step>& steps, std::size_t clocks, const SwitchCost& switching,
           const HullPlan& fast, const HullPlan& slow, std::vector<HullPlan>& out) {
  if (out.size() >= kMaxVertices) return;
  const double dt = (slow.cost.time - fast.cost.time).value();
  const double de = (fast.cost.energy - slow.cost.energy).value();
  if (!(dt > 0) || !(de > 0)) return;
  const double lambda = de / dt;
  HullPlan mid = solve(steps, clocks, lambda, switching);
  const double segment = value_of(fast, lambda);
  if (!(value_of(mid, lambda) < segment - kVertexMargin * std::abs(segment))) return;
  out.push_back(mid);
  sweep(steps, clocks, switching, fast, mid, out);
  sweep(steps, clocks, switching, mid, slow, out);
}

}  // namespace

std::vector<HullPlan> switching_hull(const std::vector<Step>& steps, std::size_t clocks,
                                     const SwitchCost& switching) {
  if (steps.empty()) return {};
  for (std::size_t a = 0; a < clocks; ++a)
    for (std::size_t b = 0; b < clocks; ++b)
      if (a != b && switching.latency_of(a, b) != switching.latency_of(0, 1))
        throw Error("switching_hull: the switch latency must be the same for every pair of clocks");
  std::vector<HullPlan> out{solve(steps, clocks, kFastestLambda, switching),
                            solve(steps, clocks, 0.0, switching)};
  const HullPlan fast = out[0], slow = out[1];
  sweep(steps, clocks, switching, fast, slow, out);
  return out;
}

}  // namespace kareus::frontier
