// SPDX-License-Identifier: Apache-2.0
#include "kareus/planner/realised.hpp"

#include <algorithm>
#include <cmath>

#include "kareus/core/error.hpp"
#include "kareus/store/store.hpp"

namespace kareus::planner {

KeyFrontiers true_readings(const workload::Workload& w, KeyFrontiers keys) {
  executor::EmulatorExecutor exact{emulator::Emulator(w.gpu)};
  for (auto& [key, r] : keys) {
    std::vector<partition::ExecConfig> configs;
    for (const auto& m : r.measured) configs.push_back(m.config);
    const auto truth = exact.measure(store::find_partition(w, key), configs);
    for (std::size_t i = 0; i < truth.size(); ++i) {
      r.measured[i].time = truth[i].time;
      r.measured[i].total_energy = truth[i].total_energy;
      r.measured[i].dynamic_energy = truth[i].dynamic_energy;
    }
    r.summary.noise_time = r.summary.noise_energy = 0.0;  // exact now
  }
  return keys;
}

std::vector<IterationPoint> realised_frontier(const workload::Workload& w, const MethodResult& m) {
  const emulator::Emulator emu(w.gpu);
  const KeyFrontiers truth = true_readings(w, m.key_frontiers);
  // The pipeline problem with every option at its true value (same sets, same indices). Options
  // without nanobatch overlap are emulated by the planner itself and read nothing.
  frontier::PipelineProblem real = m.problem;
  for (std::size_t set = 0; set < m.option_sets.size(); ++set) {
    const int stage = static_cast<int>(set / 2);
    const auto d = set % 2 == 0 ? workload::Direction::kForward : workload::Direction::kBackward;
    for (std::size_t i = 0; i < m.option_sets[set].size(); ++i) {
      const InstructionOption& o = m.option_sets[set][i];
      if (!o.nanobatch) continue;
      if (!o.step_clocks.empty())
        throw Error("realised frontier: plans at partition clock granularity are not supported");
      const emulator::RunResult r = composed_value(w, emu, stage, d, o, truth);
      real.option_sets[set][i] = {r.time, r.dynamic_energy + w.gpu.static_power * r.time};
    }
  }
  // The reported point adds the gradient tail and the transfers to the solver's cost
  // (planner.cpp, solve_method), which read nothing. So the true point is the reported one moved by
  // the change in the solver's cost, scaled to the job by the same job_dynamic_energy.
  const double gpus = static_cast<double>(w.total_gpus());
  std::vector<IterationPoint> points;
  for (const IterationPoint& p : m.frontier) {
    const auto assignment = m.solver.assignment(p.plan);
    const frontier::PlanCost read = frontier::evaluate_plan(m.problem, assignment);
    const frontier::PlanCost cost = frontier::evaluate_plan(real, assignment);
    const Seconds dt = cost.time - read.time;
    const Joules dynamic = job_dynamic_energy(w, cost.time, cost.energy) -
                           job_dynamic_energy(w, read.time, read.energy);
    IterationPoint q = p;
    // A change within rounding is none: summed in another order, equal readings can differ in
    // the last digits and drop a point the frontier rightly holds.
    const bool same = std::fabs(dt.value()) <= 1e-12 * p.time.value() &&
                      std::fabs(dynamic.value()) <= 1e-12 * p.dynamic_energy.value();
    if (!same) {
      q.time = p.time + dt;
      q.dynamic_energy = p.dynamic_energy + dynamic;
      q.energy = p.energy + dynamic + w.gpu.static_power * dt * gpus;
    }
    points.push_back(q);
  }
  std::sort(points.begin(), points.end(), [](const auto& a, const auto& b) {
    return a.time < b.time || (a.time == b.time && a.energy < b.energy);
  });
  std::vector<IterationPoint> front;
  for (const auto& q : points)
    if (front.empty() || q.energy < front.back().energy) front.push_back(q);
  return front;
}

}  // namespace kareus::planner
