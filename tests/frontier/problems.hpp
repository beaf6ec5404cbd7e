// SPDX-License-Identifier: Apache-2.0
// Small pipeline problems and their brute-force answers, shared by the pipeline solver tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "kareus/core/rng.hpp"
#include "kareus/frontier/pipeline_solver.hpp"

namespace kareus::frontier::test {

using workload::build_1f1b;

// Independent of the solver's code: longest path by relaxing every edge until nothing changes;
// an edge between stages waits for the transfer.
inline PlanCost evaluate_independently(const PipelineProblem& p, const std::vector<int>& plan) {
  const std::size_t n = p.dag.nodes.size();
  std::vector<double> duration(n), finish(n);
  double busy = 0, energy = 0;
  for (std::size_t v = 0; v < n; ++v) {
    const auto& o = p.option_sets[p.option_set_of[v]][plan[v]];
    duration[v] = o.time.value();
    finish[v] = duration[v];
    busy += duration[v];
    energy += o.energy.value();
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& [from, to] : p.dag.edges) {
      const double delay =
          p.dag.nodes[from].stage != p.dag.nodes[to].stage ? p.transfer.value() : 0.0;
      if (finish[from] + delay + duration[to] > finish[to]) {
        finish[to] = finish[from] + delay + duration[to];
        changed = true;
      }
    }
  }
  const double time = *std::max_element(finish.begin(), finish.end());
  return {Seconds(time), Joules(energy + p.p_blocking.value() * (p.dag.stages * time - busy))};
}

// Pareto set of every assignment of options to instructions.
inline ParetoSet brute_force(const PipelineProblem& p) {
  const std::size_t n = p.dag.nodes.size();
  std::vector<int> plan(n, 0);
  std::vector<ParetoPoint> points;
  while (true) {
    const auto cost = evaluate_independently(p, plan);
    points.push_back({cost.time, cost.energy});
    std::size_t v = 0;
    while (v < n && ++plan[v] == static_cast<int>(p.option_sets[p.option_set_of[v]].size()))
      plan[v++] = 0;
    if (v == n) break;
  }
  return ParetoSet::from_points(std::move(points));
}

// The least energy of the points that finish within `deadline` (infinity when none does).
inline double least_energy_within(const ParetoSet& points, double deadline) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& p : points)
    if (p.time.value() <= deadline) best = std::min(best, p.energy.value());
  return best;
}

// An option's time in whole units of `unit`, rounded up as the pipeline solver plans it.
inline double planned_units(const ExecutionOption& o, double unit) {
  return std::max(1.0, std::ceil(o.time.value() / unit - 1e-9));
}

// The plan with every instruction at the option the pipeline solver maps its fastest unit count
// to: of the options that take that many units and are cheaper in e - P t than every faster one
// (the others the solver never plans), the slowest.
inline std::vector<int> at_fastest_units(const PipelineProblem& p, double unit) {
  std::vector<int> per_set;
  for (const auto& set : p.option_sets) {
    std::vector<int> order(set.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    const auto cost = [&](int i) {
      return set[i].energy.value() - p.p_blocking.value() * set[i].time.value();
    };
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      return set[a].time != set[b].time ? set[a].time < set[b].time : cost(a) < cost(b);
    });
    const double fastest_units = planned_units(set[order.front()], unit);
    int chosen = order.front();
    double cheapest = std::numeric_limits<double>::infinity();
    for (int i : order) {
      if (cost(i) >= cheapest) continue;
      cheapest = cost(i);
      if (planned_units(set[i], unit) == fastest_units) chosen = i;
    }
    per_set.push_back(chosen);
  }
  std::vector<int> plan;
  for (int set : p.option_set_of) plan.push_back(per_set[set]);
  return plan;
}

// One option set per (stage, direction), or per instruction when `per_node`.
inline PipelineProblem make_problem(
    int stages, int microbatches, bool per_node, double p_blocking,
    const std::function<std::vector<ExecutionOption>()>& make_options) {
  PipelineProblem p;
  p.dag = build_1f1b(stages, microbatches);
  p.p_blocking = Watts(p_blocking);
  for (std::size_t v = 0; v < p.dag.nodes.size(); ++v) {
    const auto& ins = p.dag.nodes[v];
    const int shared = 2 * ins.stage + (ins.direction == workload::Direction::kBackward ? 1 : 0);
    if (per_node || static_cast<int>(p.option_sets.size()) <= shared) {
      p.option_sets.push_back(make_options());
      p.option_set_of.push_back(static_cast<int>(p.option_sets.size()) - 1);
    } else {
      p.option_set_of.push_back(shared);
    }
  }
  return p;
}

// Effective energy convex in time with an option at every whole unit between the fastest and the
// slowest: the case where unit-step Phillips-Dessouky is exact. Integers keep the sums exact.
inline std::vector<ExecutionOption> convex_unit_options(Rng& rng, double p_blocking,
                                                        int max_count) {
  const int count = static_cast<int>(rng.integer(1, max_count));
  const int fastest = static_cast<int>(rng.integer(1, 6));
  std::vector<int> slopes;
  while (static_cast<int>(slopes.size()) + 1 < count) {
    const int s = static_cast<int>(rng.integer(1, 30));
    if (std::find(slopes.begin(), slopes.end(), s) == slopes.end()) slopes.push_back(s);
  }
  std::sort(slopes.rbegin(), slopes.rend());
  double cost = static_cast<double>(rng.integer(5, 40));
  std::vector<ExecutionOption> options;
  for (int i = 0; i < count; ++i) {
    const double time = fastest + i;
    options.push_back({Seconds(time), Joules(cost + p_blocking * time)});
    if (i + 1 < count) cost -= slopes[i];
  }
  return options;
}

// Every instruction at a uniformly drawn option of its set.
inline std::vector<int> random_plan(Rng& rng, const PipelineProblem& p) {
  std::vector<int> plan;
  for (int set : p.option_set_of)
    plan.push_back(
        static_cast<int>(rng.integer(0, static_cast<std::int64_t>(p.option_sets[set].size()) - 1)));
  return plan;
}

// Brute force enumerates options^instructions plans: keep that below about 3e5.
inline int max_options(int stages, int microbatches) {
  return std::clamp(static_cast<int>(std::pow(3e5, 1.0 / (2 * stages * microbatches))), 2, 4);
}

// DVFS-like options: slowing the clock stretches time in irregular steps and saves dynamic energy,
// with +-5 % measurement noise, so the options are neither convex nor unit-spaced.
inline std::vector<ExecutionOption> dvfs_like_options(Rng& rng, int max_count) {
  const int count = static_cast<int>(rng.integer(2, max_count));
  const double base = rng.uniform(1.0, 3.0);
  double slowdown = 1.0;
  std::vector<ExecutionOption> options;
  for (int i = 0; i < count; ++i) {
    const double noise = rng.uniform(0.95, 1.05);
    options.push_back(
        {Seconds(base * slowdown), Joules(base * (20.0 + 30.0 / (slowdown * slowdown)) * noise)});
    slowdown += rng.uniform(0.05, 0.2);
  }
  return options;
}

// Up to 3 x 3 with DVFS-like options, shared per stage and direction or per instruction, with
// and without a transfer between stages: small enough to enumerate, for the MILP's tests.
inline PipelineProblem random_deadline_problem(Rng& rng, int trial) {
  const int stages = static_cast<int>(rng.integer(1, 3));
  const int microbatches = static_cast<int>(rng.integer(1, 3));
  const int count = max_options(stages, microbatches);
  auto p = make_problem(stages, microbatches, trial % 3 != 0, rng.uniform(0.0, 5.0),
                        [&] { return dvfs_like_options(rng, count); });
  if (trial % 2 == 1) p.transfer = Seconds(rng.uniform(0.0, 0.5));
  return p;
}

// A random plan within `deadline`; the all-fastest one (option 0 with DVFS-like options) when ten
// draws miss it.
inline std::vector<int> random_plan_within(Rng& rng, const PipelineProblem& p, double deadline) {
  for (int draw = 0; draw < 10; ++draw) {
    std::vector<int> plan;
    for (std::size_t v = 0; v < p.dag.nodes.size(); ++v)
      plan.push_back(static_cast<int>(
          rng.integer(0, static_cast<int>(p.option_sets[p.option_set_of[v]].size()) - 1)));
    if (evaluate_independently(p, plan).time.value() <= deadline) return plan;
  }
  return std::vector<int>(p.dag.nodes.size(), 0);
}

}  // namespace kareus::frontier::test
