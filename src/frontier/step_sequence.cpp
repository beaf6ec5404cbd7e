// SPDX-License-Identifier: Apache-2.0
#include "kareus/frontier/step_sequence.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "kareus/core/error.hpp"

namespace kareus::frontier {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Back-pointers are stored for every (step, clock, quantum), so they are kept to 16 bits.
constexpr std::size_t kMaxIndex = std::numeric_limits<std::uint16_t>::max();
// Guards the DP tables against a quantum so small that they would not fit in memory.
constexpr double kMaxCells = 4e8;
// Absorbs floating-point noise when a time is an exact multiple of the quantum.
constexpr double kRoundingSlack = 1e-9;

void validate(std::span<const Step> steps, const SwitchCost& switching) {
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto& step = steps[i];
    const std::string where = fmt::format("step {} ('{}')", i, step.name);
    if (step.options.empty()) throw Error(where + ": has no options");
    if (step.options.size() >= kMaxIndex)
      throw Error(fmt::format("{}: {} options, at most {} allowed", where, step.options.size(),
                              kMaxIndex - 1));
    for (const auto& o : step.options) {
      require(std::isfinite(o.time.value()) && o.time.value() >= 0, where, "option time_s",
              format_number(o.time.value()), "must be finite and >= 0");
      require(std::isfinite(o.energy.value()), where, "option energy_j",
              format_number(o.energy.value()), "must be finite");
      if (!switching.ideal() && o.clock >= switching.latency.size())
        throw Error(fmt::format("{}: clock index {} is outside the {}x{} switch-latency matrix",
                                where, o.clock, switching.latency.size(),
                                switching.latency.size()));
    }
  }
}

long quanta(Seconds t, Seconds quantum) {
  // Saturates: a duration of more quanta than any budget holds is simply too long, and a double
  // beyond the range of long must not be converted (that is undefined and came out negative, so
  // a far too slow option looked free when the quantum was tiny).
  constexpr double kMost = 1e15;
  const double q = std::ceil(t / quantum - kRoundingSlack);
  if (!(q < kMost)) return static_cast<long>(kMost);
  return std::max(0L, static_cast<long>(q));
}

}  // namespace

Seconds SwitchCost::latency_of(std::size_t from, std::size_t to) const {
  if (ideal() || from == to) return Seconds(0);
  return latency.at(from).at(to);
}

SwitchCost uniform_switch_cost(std::size_t clocks, Seconds latency, Watts power) {
  SwitchCost cost;
  cost.power = power;
  cost.latency.assign(clocks, std::vector<Seconds>(clocks, latency));
  for (std::size_t c = 0; c < clocks; ++c) cost.latency[c][c] = Seconds(0);
  return cost;
}

SequenceCost evaluate_choice(std::span<const Step> steps, std::span<const std::size_t> choice,
                             const SwitchCost& switching,
                             std::optional<std::size_t> initial_clock) {
  if (choice.size() != steps.size())
    throw Error(fmt::format("a plan has {} choices for {} steps", choice.size(), steps.size()));
  SequenceCost cost;
  std::optional<std::size_t> clock = initial_clock;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto& option = steps[i].options.at(choice[i]);
    if (clock && *clock != option.clock) {
      ++cost.switches;
      cost.switch_time += switching.latency_of(*clock, option.clock);
      cost.switch_energy += switching.energy_of(*clock, option.clock);
    }
    clock = option.clock;
    cost.time += option.time;
    cost.energy += option.energy;
  }
  cost.time += cost.switch_time;
  cost.energy += cost.switch_energy;
  return cost;
}

SequencePlan plan_min_energy(std::span<const Step> steps, const SwitchCost& switching,
                             const SequenceBudget& options) {
  validate(steps, switching);
  const std::size_t n = steps.size();
  std::vector<Seconds> fastest(n);
  Seconds base{0};
  for (std::size_t i = 0; i < n; ++i) {
    fastest[i] = std::min_element(steps[i].options.begin(), steps[i].options.end(),
                                  [](const auto& a, const auto& b) { return a.time < b.time; })
                     ->time;
    base += fastest[i];
  }
  SequencePlan plan;
  Seconds slack = options.time_budget - base;
  // A budget equal to the fastest plan's time, summed in another order, can miss it by rounding
  // either way; a slack that small is none (as a quantum it would be far below any time step).
  if (std::fabs(slack.value()) <= kRoundingSlack * base.value()) slack = Seconds(0);
  if (options.quantum) {
    require(options.quantum->value() > 0, "plan options", "quantum_s",
            format_number(options.quantum->value()), "must be > 0");
    plan.quantum = *options.quantum;
  } else {
    require(options.time_bins > 0, "plan options", "time_bins", "0", "must be >= 1");
    // With no slack only zero-slack options fit, whatever the quantum.
    plan.quantum = slack.value() > 0 ? slack / static_cast<double>(options.time_bins) : Seconds(1);
  }
  if (slack.value() < 0) return plan;

  // Quantising the slack over each step's fastest option, rather than the whole time, makes the
  // rounding error a fraction of the slack instead of a fraction of the budget.
  const auto budget_q = static_cast<long>(std::floor(slack / plan.quantum + kRoundingSlack));
  const std::size_t width = static_cast<std::size_t>(budget_q) + 1;
  std::size_t states = 1;
  if (!switching.ideal()) {
    states = switching.latency.size();
    if (states >= kMaxIndex)
      throw Error(fmt::format("{} clocks in the switch-latency matrix, at most {} allowed", states,
                              kMaxIndex - 1));
  }
  if (static_cast<double>(n) * static_cast<double>(states) * static_cast<double>(width) > kMaxCells)
    throw Error(fmt::format(
        "the DP would need {} steps x {} clocks x {} time quanta = {:.3g} cells, at most {:.0e}; "
        "use a coarser quantum or fewer time bins",
        n, states, width,
        static_cast<double>(n) * static_cast<double>(states) * static_cast<double>(width),
        kMaxCells));

  std::vector<std::vector<long>> latency_q(states, std::vector<long>(states, 0));
  std::vector<std::vector<double>> switch_j(states, std::vector<double>(states, 0.0));
  for (std::size_t a = 0; a < states && !switching.ideal(); ++a)
    for (std::size_t b = 0; b < states; ++b) {
      latency_q[a][b] = quanta(switching.latency_of(a, b), plan.quantum);
      switch_j[a][b] = switching.energy_of(a, b).value();
    }

  const auto cell = [width](std::size_t state, long s) {
    return state * width + static_cast<std::size_t>(s);
  };
  std::vector<double> prev(states * width, kInf);
  if (options.initial_clock && !switching.ideal()) {
    if (*options.initial_clock >= states)
      throw Error(fmt::format("initial clock index {} is outside the {}x{} switch-latency matrix",
                              *options.initial_clock, states, states));
    prev[cell(*options.initial_clock, 0)] = 0.0;
  } else {
    for (std::size_t k = 0; k < states; ++k) prev[cell(k, 0)] = 0.0;
  }

  // came_from[i]: clock before step i's switch; picked[i]: option of step i; both per cell.
  std::vector<std::vector<std::uint16_t>> came_from(n), picked(n);
  std::vector<double> arrived(states * width);
  std::vector<double> cur(states * width);
  for (std::size_t i = 0; i < n; ++i) {
    came_from[i].assign(states * width, 0);
    picked[i].assign(states * width, kMaxIndex);
    // arrived[k][x]: cheapest way to be at clock k with x quanta of slack used, before step i.
    std::fill(arrived.begin(), arrived.end(), kInf);
    for (std::size_t k = 0; k < states; ++k) {
      for (std::size_t from = 0; from < states; ++from) {
        const long lq = latency_q[from][k];
        for (long x = lq; x <= budget_q; ++x) {
          const double e = prev[cell(from, x - lq)] + switch_j[from][k];
          if (e < arrived[cell(k, x)]) {
            arrived[cell(k, x)] = e;
            came_from[i][cell(k, x)] = static_cast<std::uint16_t>(from);
          }
        }
      }
    }
    std::fill(cur.begin(), cur.end(), kInf);
    for (std::size_t o = 0; o < steps[i].options.size(); ++o) {
      const auto& option = steps[i].options[o];
      const std::size_t k = switching.ideal() ? 0 : option.clock;
      const long u = quanta(option.time - fastest[i], plan.quantum);
      for (long s = u; s <= budget_q; ++s) {
        const double e = arrived[cell(k, s - u)] + option.energy.value();
        if (e < cur[cell(k, s)]) {
          cur[cell(k, s)] = e;
          picked[i][cell(k, s)] = static_cast<std::uint16_t>(o);
        }
      }
    }
    prev.swap(cur);
  }

  std::size_t best = 0;
  for (std::size_t c = 1; c < prev.size(); ++c)
    if (prev[c] < prev[best]) best = c;
  if (!(prev[best] < kInf)) return plan;

  plan.choice.assign(n, 0);
  std::size_t k = best / width;
  long s = static_cast<long>(best % width);
  for (std::size_t i = n; i-- > 0;) {
    const std::size_t o = picked[i][cell(k, s)];
    plan.choice[i] = o;
    const long x = s - quanta(steps[i].options[o].time - fastest[i], plan.quantum);
    const std::size_t from = came_from[i][cell(k, x)];
    s = x - latency_q[from][k];
    k = from;
  }
  plan.feasible = true;
  plan.cost = evaluate_choice(steps, plan.choice, switching,
                              switching.ideal() ? std::nullopt : options.initial_clock);
  // Each step's slack and each switch's latency may be overestimated by up to one quantum.
  const double rounded = static_cast<double>(n) * (switching.ideal() ? 1.0 : 2.0);
  plan.quantisation_loss = plan.quantum * rounded;
  return plan;
}

std::vector<CurvePoint> lagrangian_curve(std::span<const Step> steps) {
  validate(steps, SwitchCost{});
  struct Edge {
    double slope;
    Seconds dt;
    Joules de;
  };
  std::vector<Edge> edges;
  CurvePoint start{};
  for (const auto& step : steps) {
    auto pts = step.options;
    std::sort(pts.begin(), pts.end(), [](const auto& a, const auto& b) {
      return a.time < b.time || (a.time == b.time && a.energy < b.energy);
    });
    // Only options that are faster or cheaper than all others can be optimal for some lambda.
    std::vector<StepOption> hull;
    for (const auto& p : pts) {
      if (!hull.empty() && p.energy >= hull.back().energy) continue;
      while (hull.size() >= 2) {
        const auto& a = hull[hull.size() - 2];
        const auto& b = hull.back();
        const double cross = (b.time - a.time).value() * (p.energy - a.energy).value() -
                             (b.energy - a.energy).value() * (p.time - a.time).value();
        if (cross > 0) break;
        hull.pop_back();
      }
      hull.push_back(p);
    }
    start.time += hull.front().time;
    start.energy += hull.front().energy;
    for (std::size_t j = 1; j < hull.size(); ++j) {
      const Seconds dt = hull[j].time - hull[j - 1].time;
      const Joules de = hull[j].energy - hull[j - 1].energy;
      edges.push_back({de.value() / dt.value(), dt, de});
    }
  }
  // The hull of a sum of independent choices is the Minkowski sum of the per-step hulls: their
  // edges taken in order of slope.
  std::sort(edges.begin(), edges.end(),
            [](const Edge& a, const Edge& b) { return a.slope < b.slope; });
  std::vector<CurvePoint> curve{start};
  for (const auto& edge : edges) {
    curve.back().lambda = Watts(-edge.slope);
    CurvePoint next = curve.back();
    next.time += edge.dt;
    next.energy += edge.de;
    next.lambda = Watts(0);
    curve.push_back(next);
  }
  return curve;
}

}  // namespace kareus::frontier
