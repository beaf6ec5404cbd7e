// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "kareus/calibration/measurements.hpp"
#include "kareus/core/csv.hpp"
#include "kareus/core/error.hpp"
#include "kareus/planner/planner.hpp"

namespace kareus::calibration {
namespace {

// A planned frontier point: iteration time and dynamic energy over one GPU of each stage.
struct ModelPoint {
  double time = 0;
  double energy = 0;
};

// Linear interpolation of energy at `time` along points sorted by time, clamped at the ends.
double energy_at(const std::vector<ModelPoint>& frontier, double time) {
  if (time <= frontier.front().time) return frontier.front().energy;
  if (time >= frontier.back().time) return frontier.back().energy;
  const auto hi = std::upper_bound(frontier.begin(), frontier.end(), time,
                                   [](double t, const ModelPoint& p) { return t < p.time; });
  const auto lo = hi - 1;
  const double a = (time - lo->time) / (hi->time - lo->time);
  return lo->energy + a * (hi->energy - lo->energy);
}

}  // namespace

FrontierMeasurements::FrontierMeasurements(const std::filesystem::path& csv,
                                           const workload::Workload& w)
    : csv_(csv), workload_(w) {
  const CsvTable table = CsvTable::read_file(csv);
  table.require_columns({"method", "iteration_time_s", "dynamic_energy_J_stage_sum"});
  const std::map<std::string, planner::Method> methods = {
      {"perseus", planner::Method::kPerseus},
      {"nanobatch_perseus", planner::Method::kNanobatchPerseus},
      {"kareus", planner::Method::kKareus}};
  for (std::size_t i = 0; i < table.rows(); ++i) {
    const CsvRow row = table.row(i);
    const std::string name = row.text("method");
    const auto m = methods.find(name);
    if (m == methods.end()) row.fail("method", "perseus, nanobatch_perseus or kareus");
    auto it = std::find_if(methods_.begin(), methods_.end(),
                           [&](const Method& x) { return x.name == name; });
    if (it == methods_.end()) {
      methods_.push_back({name, static_cast<int>(m->second), {}});
      it = methods_.end() - 1;
    }
    it->points.push_back({row.positive_number("iteration_time_s"),
                          row.positive_number("dynamic_energy_J_stage_sum")});
  }
  for (Method& m : methods_) {
    std::sort(m.points.begin(), m.points.end(),
              [](const auto& a, const auto& b) { return a.time < b.time; });
    require(m.points.size() >= 3 && m.points.back().time > m.points.front().time, csv.string(),
            "method", m.name, "needs 3 plans at different times at least to have a frontier");
  }
  require(!methods_.empty(), csv.string(), "rows", "0", "expected one row per plan");
}

std::size_t FrontierMeasurements::observations() const {
  std::size_t n = 0;
  for (const Method& m : methods_) n += m.points.size() + 2;
  return n;
}

bool FrontierMeasurements::search_on(const GpuSpec& gpu, const std::vector<std::size_t>& groups) {
  workload::Workload w = workload_;
  w.gpu = gpu;
  planner::PlanOptions options;
  options.methods.clear();
  for (std::size_t g : groups)
    options.methods.push_back(static_cast<planner::Method>(methods_.at(g).planner_method));
  const planner::PlanResult plan = planner::plan(w, options);
  for (std::size_t g : groups) {
    const Method& real = methods_[g];
    // The model frontier is read where residuals() reads it.
    std::vector<double> positions;
    for (const Point& p : real.points)
      positions.push_back((p.time - real.points.front().time) /
                          (real.points.back().time - real.points.front().time));
    planned_.erase(g);
    planned_.emplace(
        g, PlannedFrontier(w, plan.methods.at(static_cast<planner::Method>(real.planner_method)),
                           positions));
  }
  return true;
}

Residuals FrontierMeasurements::residuals(const GpuSpec& gpu,
                                          const std::vector<std::size_t>& groups) const {
  // The artifact's energies are one GPU of each stage summed; the planner's the whole job's.
  const auto& p = workload_.parallelism;
  const double per_stage_gpu = 1.0 / (p.tp * p.cp * p.dp);
  Residuals out;
  for (std::size_t g : groups) {
    const Method& real = methods_[g];
    const auto planned = planned_.find(g);
    if (planned == planned_.end())
      throw Error(
          fmt::format("internal: the {} frontier was not planned before its residuals", real.name));
    std::vector<ModelPoint> model;
    for (const auto& point : planned->second.on(gpu))
      model.push_back({point.time.value(), point.dynamic_energy.value() * per_stage_gpu});
    std::sort(model.begin(), model.end(),
              [](const ModelPoint& a, const ModelPoint& b) { return a.time < b.time; });
    const double t_fast = real.points.front().time, t_slow = real.points.back().time;
    const double m_fast = model.front().time, m_slow = model.back().time;
    out.log_ratio.push_back(std::log(m_fast / t_fast));
    out.energy.push_back(false);
    out.log_ratio.push_back(std::log(m_slow / t_slow));
    out.energy.push_back(false);
    for (const auto& point : real.points) {
      const double u = (point.time - t_fast) / (t_slow - t_fast);
      const double e = energy_at(model, m_fast + u * (m_slow - m_fast));
      out.log_ratio.push_back(std::log(e / point.dynamic_energy));
      out.energy.push_back(true);
    }
  }
  return out;
}

std::string FrontierMeasurements::describe() const {
  std::string names;
  std::size_t points = 0;
  for (const Method& m : methods_) {
    names += (names.empty() ? "" : ", ") + m.name;
    points += m.points.size();
  }
  return fmt::format("{} frontier plans of {} ({}) in {}", points, workload_.model.name, names,
                     csv_.string());
}

}  // namespace kareus::calibration
