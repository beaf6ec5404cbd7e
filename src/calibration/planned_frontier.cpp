// SPDX-License-Identifier: Apache-2.0
#include "kareus/calibration/planned_frontier.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "kareus/core/error.hpp"
#include "kareus/executor/iteration.hpp"
#include "kareus/planner/realised.hpp"

namespace kareus::calibration {
namespace {

// Whether `p`, a reading of partition `key`, is one `o` runs.
bool runs(const planner::InstructionOption& o, const std::string& key,
          const store::PartitionPoint& p) {
  if (p.config.clock != o.clock) return false;
  for (const auto* chosen : {&o.configs, &o.recompute}) {
    const auto c = chosen->find(key);
    if (c != chosen->end() && c->second.slot == p.config.slot && c->second.sms == p.config.comm_sms)
      return true;
  }
  return false;
}

// Indices into `frontier` (by increasing time) of the plans PlannedFrontier keeps.
std::set<std::size_t> kept_points(const std::vector<planner::IterationPoint>& frontier,
                                  const std::vector<double>& positions) {
  std::set<std::size_t> kept = {0, frontier.size() - 1};
  const Seconds fastest = frontier.front().time, slowest = frontier.back().time;
  for (double u : positions) {
    const Seconds t = fastest + (slowest - fastest) * std::clamp(u, 0.0, 1.0);
    const auto after = static_cast<std::size_t>(
        std::upper_bound(frontier.begin(), frontier.end(), t,
                         [](Seconds x, const planner::IterationPoint& p) { return x < p.time; }) -
        frontier.begin());
    if (after > 0) kept.insert(after - 1);
    if (after < frontier.size()) kept.insert(after);
  }
  return kept;
}

}  // namespace

PlannedFrontier::PlannedFrontier(const workload::Workload& w, const planner::MethodResult& method,
                                 const std::vector<double>& positions)
    : workload_(w), problem_(method.problem), option_sets_(method.option_sets) {
  std::set<std::pair<std::size_t, std::size_t>> chosen;
  for (std::size_t k : kept_points(method.frontier, positions)) {
    const planner::IterationPoint& p = method.frontier[k];
    plans_.push_back(p.plan);
    assignments_.push_back(method.solver.assignment(p.plan));
    for (std::size_t node = 0; node < assignments_.back().size(); ++node)
      chosen.insert({static_cast<std::size_t>(problem_.option_set_of[node]),
                     static_cast<std::size_t>(assignments_.back()[node])});
  }
  for (const auto& [set, index] : chosen) {
    const planner::InstructionOption& o = option_sets_[set][index];
    if (o.governor || !o.step_clocks.empty())
      throw Error(
          fmt::format("calibration: {} plans run the default governor or change clock "
                      "within an instruction, which a fit cannot value again",
                      planner::to_string(method.method)));
    chosen_.push_back({set, index});
  }
  // The readings the chosen options compose, so that valuing them re-measures no other.
  for (const auto& [key, result] : method.key_frontiers) {
    store::PartitionSearchResult kept = result;
    kept.measured.clear();
    for (const store::PartitionPoint& p : result.measured)
      for (const Option& c : chosen_)
        if (runs(option_sets_[c.set][c.index], key, p)) {
          kept.measured.push_back(p);
          break;
        }
    keys_.emplace(key, std::move(kept));
  }
}

std::vector<planner::IterationPoint> PlannedFrontier::on(const GpuSpec& gpu) const {
  workload::Workload w = workload_;
  w.gpu = gpu;
  const emulator::Emulator emu(gpu);
  // As planner::plan values them: the work outside the instructions at the maximum clock.
  const auto at_max = emulator::ClockPolicy::locked_at(gpu.clock_max);
  const emulator::OutsideWork tail = emulator::iteration_tail(w, emu, at_max);
  const emulator::OutsideWork transfers = emulator::pipeline_transfers(w, emu, at_max);
  const planner::KeyFrontiers readings = planner::true_readings(w, keys_);
  frontier::PipelineProblem problem = problem_;
  problem.p_blocking = gpu.static_power;
  problem.transfer = transfers.time;
  for (const Option& c : chosen_) {
    const planner::InstructionOption& o = option_sets_[c.set][c.index];
    const int stage = static_cast<int>(c.set / 2);
    const auto d = c.set % 2 == 0 ? workload::Direction::kForward : workload::Direction::kBackward;
    const auto policy = emulator::ClockPolicy::locked_at(o.clock);
    // Kareus composes its options from partition readings; the baselines run the instruction.
    const emulator::RunResult r =
        !o.nanobatch ? emulator::run_instruction_sequential(w, emu, stage, d, policy)
        : readings.empty()
            ? emulator::run_instruction_nanobatch(w, emu, stage, d, policy, o.configs, o.recompute)
            : planner::composed_value(w, emu, stage, d, o, readings);
    problem.option_sets[c.set][c.index] = {r.time, r.dynamic_energy + gpu.static_power * r.time};
  }
  // The whole-job point of a solver plan, as the planner makes it.
  const planner::JobConversion job{w, tail.time, tail.dynamic_energy, transfers.dynamic_energy};
  std::vector<planner::IterationPoint> points;
  for (std::size_t k = 0; k < plans_.size(); ++k) {
    const frontier::PlanCost cost = frontier::evaluate_plan(problem, assignments_[k]);
    points.push_back(job.point({cost.time, cost.energy, plans_[k]}));
  }
  std::sort(points.begin(), points.end(), [](const auto& a, const auto& b) {
    return a.time < b.time || (a.time == b.time && a.energy < b.energy);
  });
  std::vector<planner::IterationPoint> front;
  for (const auto& p : points)
    if (front.empty() || p.energy < front.back().energy) front.push_back(p);
  return front;
}

}  // namespace kareus::calibration
